// SPDX-License-Identifier: Apache-2.0
// The text of a generation, built from its token ids as they arrive (the incremental
// detokenizer): what the chat API streams and answers (service/chat_generation.h), and, in one
// piece, what the engine puts in GenerationResult::text (DecodeGenerated).
//
// Rules:
// * Text is released only as whole UTF-8 characters: ids whose decoding ends in U+FFFD are held
//   until more ids (or the end) arrive. Byte-level decoding of a split at such a point equals
//   decoding everything at once, so only the held ids are decoded again.
// * Ids without a token (the embedding rows past the vocabulary) are dropped, as Hugging Face
//   tokenizers' decode drops them (without this, one such id emptied the whole text); special
//   tokens (added tokens marked special in tokenizer.json, e.g. <|box_start|>, <|im_end|>) too
//   when skip_special is set, and kept verbatim otherwise.
// * The text is cut before the first stop string; a tail that could still grow into a stop
//   string is not released until it cannot.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "text/tokenizer.h"

namespace mineru::text {

// `ids` decoded at once by the rules above (no stop strings, nothing held); empty when the
// tokenizer refuses them (more than TokenizerLimits::max_decode_ids ids).
std::string DecodeGenerated(const Tokenizer& tokenizer, std::span<const int32_t> ids,
                            bool skip_special);

class TextAssembler {
 public:
  // `tokenizer` must outlive the assembler.
  TextAssembler(const Tokenizer& tokenizer, bool skip_special, std::vector<std::string> stop);

  // Adds generated ids; true once a stop string matched (the text is then final).
  bool Add(std::span<const int32_t> ids);
  // The generation ended: held ids are decoded as they are.
  void Finish();
  // The text released since the last call.
  std::string TakeDelta();

  const std::string& text() const { return text_; }
  bool stopped() const { return stopped_; }
  int64_t ids_seen() const { return ids_seen_; }

 private:
  std::string Decode(const std::vector<int32_t>& ids) const;
  void Append(const std::string& decoded);
  // Length of the longest tail of the text that is a proper prefix of a stop string.
  size_t Holdback() const;

  const Tokenizer& tokenizer_;
  const bool skip_special_;
  const std::vector<std::string> stop_;
  size_t max_stop_ = 0;
  std::vector<int32_t> pending_;  // ids not yet in text_
  std::string text_;
  size_t released_ = 0;  // bytes of text_ handed out by TakeDelta
  int64_t ids_seen_ = 0;
  bool stopped_ = false;
  bool finished_ = false;
};

}  // namespace mineru::text
