// SPDX-License-Identifier: Apache-2.0
// The BPE model of a byte-level tokenizer.json ("model": {"type": "BPE", ...}).
//
// A piece's bytes start as one symbol each (the vocabulary entry of the byte's alphabet code
// point, text/byte_level.h); then the adjacent pair with the lowest merge rank is merged, ties
// to the leftmost, until no pair of the remaining symbols has a merge. This is Hugging Face
// tokenizers' algorithm (a min-heap of (rank, position) with stale entries skipped), including
// its handling of a byte missing from the vocabulary: it becomes unk_token when there is one
// (consecutive ones fused with fuse_unk), else it is dropped.
//
// Accepted model fields: vocab (object token -> id), merges ("a b" strings or ["a", "b"] pairs;
// a later duplicate of a pair takes the later rank, as in tokenizers), unk_token, fuse_unk,
// ignore_merges (a piece that is itself in the vocabulary is taken whole), and dropout,
// continuing_subword_prefix, end_of_word_suffix, byte_fallback only at their neutral values.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/json.h"
#include "base/status.h"
#include "text/string_map.h"

namespace mineru::text {

// Pieces up to this many bytes are remembered with their ids (most words recur); at most
// kBpeCacheEntries of them, after which new pieces are computed each time. Bounds memory, not
// input.
inline constexpr size_t kBpeCacheMaxPieceBytes = 64;
inline constexpr size_t kBpeCacheEntries = 1 << 16;

// A model's vocab members and merges streamed out of the tree while parsing (base/json.h,
// JsonStream; Tokenizer::Load), in document order.
struct BpeTables {
  std::vector<std::pair<std::string, Json>> vocab;  // token, id
  std::vector<Json> merges;
};

class BpeModel {
 public:
  // `model` is the "model" object; `where` prefixes error messages. With `streamed`, the model's
  // "vocab" and "merges" containers were streamed out (they are empty in `model`) and their
  // contents are in `streamed`; the same checks apply to them. A token repeated in the vocab
  // takes its last id (as a parsed tree keeps the last member).
  static Result<std::unique_ptr<BpeModel>> FromJson(const Json& model, std::string_view where,
                                                    const BpeTables* streamed = nullptr);

  // Appends the ids of one piece (raw bytes; the model maps them to its alphabet). Thread-safe.
  void EncodePiece(std::string_view bytes, std::vector<int32_t>* ids) const;

  const StringMap<int32_t>& vocab() const { return vocab_; }
  size_t num_merges() const { return num_merges_; }

  BpeModel(const BpeModel&) = delete;
  BpeModel& operator=(const BpeModel&) = delete;
  ~BpeModel();

 private:
  class PairMap;
  BpeModel();

  void Merge(std::string_view bytes, std::vector<int32_t>* ids) const;

  StringMap<int32_t> vocab_;
  std::unique_ptr<PairMap> merges_;  // (left id, right id) -> (rank, merged id)
  size_t num_merges_ = 0;
  int32_t byte_ids_[256];  // id of each byte's alphabet code point, -1 when absent
  int32_t unk_id_ = -1;
  bool fuse_unk_ = false;
  bool ignore_merges_ = false;

  mutable std::mutex cache_mutex_;
  mutable StringMap<std::vector<int32_t>> cache_;
};

}  // namespace mineru::text
