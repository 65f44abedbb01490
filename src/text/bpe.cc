// SPDX-License-Identifier: Apache-2.0
#include "text/bpe.h"

#include <algorithm>
#include <limits>
#include <queue>

#include "text/byte_level.h"
#include "text/utf8.h"

namespace mineru::text {

// Open-addressing hash map from a pair of ids to (rank, merged id): the inner loop of BPE does
// one lookup per candidate pair, so it is kept flat and branch-light.
class BpeModel::PairMap {
 public:
  struct Value {
    uint32_t rank;
    int32_t id;
  };

  explicit PairMap(size_t expected) {
    size_t capacity = 16;
    while (capacity < expected * 2) capacity <<= 1;
    slots_.assign(capacity, Slot{kEmpty, {0, 0}});
    mask_ = capacity - 1;
  }

  // Inserts or overwrites (a later merge of the same pair wins, as in tokenizers).
  void Put(int32_t a, int32_t b, Value value) {
    const uint64_t key = Key(a, b);
    for (size_t i = Hash(key);; i = (i + 1) & mask_) {
      if (slots_[i].key == kEmpty || slots_[i].key == key) {
        slots_[i] = {key, value};
        return;
      }
    }
  }

  const Value* Find(int32_t a, int32_t b) const {
    const uint64_t key = Key(a, b);
    for (size_t i = Hash(key);; i = (i + 1) & mask_) {
      if (slots_[i].key == key) return &slots_[i].value;
      if (slots_[i].key == kEmpty) return nullptr;
    }
  }

 private:
  static constexpr uint64_t kEmpty = ~uint64_t{0};
  struct Slot {
    uint64_t key;
    Value value;
  };
  static uint64_t Key(int32_t a, int32_t b) {
    return (uint64_t{static_cast<uint32_t>(a)} << 32) | static_cast<uint32_t>(b);
  }
  size_t Hash(uint64_t key) const {
    return static_cast<size_t>((key * 0x9E3779B97F4A7C15ull) >> 20) & mask_;
  }

  std::vector<Slot> slots_;
  size_t mask_ = 0;
};

namespace {

Result<std::string> NeutralString(const Json& model, std::string_view key, std::string_view where) {
  MINERU_ASSIGN_OR_RETURN(std::optional<std::string> value, FindString(model, key, where));
  if (value && !value->empty()) {
    return Fail(ErrorCode::kUnsupported, "{}: '{}' = \"{}\" is not supported (only \"\")", where,
                key, *value);
  }
  return std::string();
}

// One merge rule as its two token strings.
Result<std::pair<std::string, std::string>> ParseMerge(const Json& merge, size_t rank,
                                                       std::string_view where) {
  if (merge.is_string()) {
    const std::string& line = merge.get_ref<const std::string&>();
    const size_t space = line.find(' ');
    if (space == std::string::npos || line.find(' ', space + 1) != std::string::npos) {
      return Fail(ErrorCode::kCorrupt, "{}: merges[{}] \"{}\" is not two tokens split by a space",
                  where, rank, line);
    }
    return std::pair(line.substr(0, space), line.substr(space + 1));
  }
  if (merge.is_array() && merge.size() == 2 && merge[0].is_string() && merge[1].is_string()) {
    return std::pair(merge[0].get<std::string>(), merge[1].get<std::string>());
  }
  return Fail(ErrorCode::kCorrupt, "{}: merges[{}] must be \"a b\" or [\"a\", \"b\"], got {}",
              where, rank, merge.dump().substr(0, 80));
}

Result<int32_t> VocabId(const StringMap<int32_t>& vocab, const std::string& token, size_t rank,
                        std::string_view where) {
  const auto it = vocab.find(token);
  if (it == vocab.end()) {
    return Fail(ErrorCode::kCorrupt, "{}: merges[{}] names \"{}\", which is not in the vocab",
                where, rank, token);
  }
  return it->second;
}

// Per-thread scratch of the merge loop (reused, so encoding allocates nothing per piece).
struct Symbol {
  int32_t id;
  int32_t prev, next;  // neighbours among live symbols, -1 at the ends
  bool alive;
};
struct Candidate {
  uint32_t rank;
  int32_t pos;  // index of the left symbol
  int32_t id;   // what the pair merges into
  // Min-heap order: lowest rank first, then leftmost.
  bool operator>(const Candidate& o) const { return rank != o.rank ? rank > o.rank : pos > o.pos; }
};
struct MergeScratch {
  std::vector<Symbol> symbols;
  std::vector<Candidate> heap;
};

}  // namespace

BpeModel::BpeModel() = default;
BpeModel::~BpeModel() = default;

Result<std::unique_ptr<BpeModel>> BpeModel::FromJson(const Json& model, std::string_view where,
                                                     const BpeTables* streamed) {
  std::unique_ptr<BpeModel> bpe(new BpeModel());
  MINERU_ASSIGN_OR_RETURN(std::optional<double> dropout, FindNumber(model, "dropout", where));
  if (dropout && *dropout != 0.0) {
    return Fail(ErrorCode::kUnsupported, "{}: dropout {} is not supported (only null or 0)", where,
                *dropout);
  }
  MINERU_RETURN_IF_ERROR(NeutralString(model, "continuing_subword_prefix", where));
  MINERU_RETURN_IF_ERROR(NeutralString(model, "end_of_word_suffix", where));
  MINERU_ASSIGN_OR_RETURN(std::optional<bool> byte_fallback,
                          FindBool(model, "byte_fallback", where));
  if (byte_fallback.value_or(false)) {
    return Fail(ErrorCode::kUnsupported, "{}: byte_fallback=true is not supported", where);
  }
  MINERU_ASSIGN_OR_RETURN(std::optional<bool> fuse_unk, FindBool(model, "fuse_unk", where));
  MINERU_ASSIGN_OR_RETURN(std::optional<bool> ignore_merges,
                          FindBool(model, "ignore_merges", where));
  bpe->fuse_unk_ = fuse_unk.value_or(false);
  bpe->ignore_merges_ = ignore_merges.value_or(false);

  const auto vocab = model.find("vocab");
  if (vocab == model.end() || !vocab->is_object()) {
    return Fail(ErrorCode::kCorrupt, "{}: 'vocab' must be an object of token -> id", where);
  }
  auto add_token = [&](const std::string& token, const Json& id) -> Status {
    if (!id.is_number_integer() || id.get<int64_t>() < 0 ||
        id.get<int64_t>() > std::numeric_limits<int32_t>::max()) {
      return Fail(ErrorCode::kCorrupt, "{}: vocab[\"{}\"] must be an id in [0, 2^31), got {}",
                  where, token, id.dump());
    }
    if (token.empty()) return Fail(ErrorCode::kCorrupt, "{}: vocab has an empty token", where);
    bpe->vocab_.insert_or_assign(token, static_cast<int32_t>(id.get<int64_t>()));
    return OkStatus();
  };
  if (streamed != nullptr) {
    bpe->vocab_.reserve(streamed->vocab.size());
    for (const auto& [token, id] : streamed->vocab) MINERU_RETURN_IF_ERROR(add_token(token, id));
  } else {
    bpe->vocab_.reserve(vocab->size());
    for (const auto& [token, id] : vocab->items()) MINERU_RETURN_IF_ERROR(add_token(token, id));
  }

  MINERU_ASSIGN_OR_RETURN(std::optional<std::string> unk, FindString(model, "unk_token", where));
  if (unk) {
    const auto it = bpe->vocab_.find(*unk);
    if (it == bpe->vocab_.end()) {
      return Fail(ErrorCode::kCorrupt, "{}: unk_token \"{}\" is not in the vocab", where, *unk);
    }
    bpe->unk_id_ = it->second;
  }
  for (int b = 0; b < 256; ++b) {
    std::string spelled;
    AppendUtf8(ByteLevelChar(static_cast<uint8_t>(b)), &spelled);
    const auto it = bpe->vocab_.find(spelled);
    bpe->byte_ids_[b] = it == bpe->vocab_.end() ? -1 : it->second;
  }

  const auto merges = model.find("merges");
  if (merges == model.end() || !merges->is_array()) {
    return Fail(ErrorCode::kCorrupt, "{}: 'merges' must be an array", where);
  }
  const Json::array_t& merge_list =
      streamed != nullptr ? streamed->merges : merges->get_ref<const Json::array_t&>();
  bpe->merges_ = std::make_unique<PairMap>(merge_list.size());
  bpe->num_merges_ = merge_list.size();
  std::string joined;
  for (size_t rank = 0; rank < merge_list.size(); ++rank) {
    MINERU_ASSIGN_OR_RETURN(auto pair, ParseMerge(merge_list[rank], rank, where));
    MINERU_ASSIGN_OR_RETURN(const int32_t a, VocabId(bpe->vocab_, pair.first, rank, where));
    MINERU_ASSIGN_OR_RETURN(const int32_t b, VocabId(bpe->vocab_, pair.second, rank, where));
    joined = pair.first + pair.second;
    MINERU_ASSIGN_OR_RETURN(const int32_t merged, VocabId(bpe->vocab_, joined, rank, where));
    bpe->merges_->Put(a, b, {static_cast<uint32_t>(rank), merged});
  }
  return bpe;
}

void BpeModel::EncodePiece(std::string_view bytes, std::vector<int32_t>* ids) const {
  if (bytes.empty()) return;
  if (ignore_merges_) {
    const auto it = vocab_.find(ToByteLevel(bytes));
    if (it != vocab_.end()) {
      ids->push_back(it->second);
      return;
    }
  }
  const bool cacheable = bytes.size() <= kBpeCacheMaxPieceBytes;
  if (cacheable) {
    std::lock_guard<std::mutex> lock(cache_mutex_);
    const auto it = cache_.find(bytes);
    if (it != cache_.end()) {
      ids->insert(ids->end(), it->second.begin(), it->second.end());
      return;
    }
  }
  const size_t first = ids->size();
  Merge(bytes, ids);
  if (cacheable) {
    std::lock_guard<std::mutex> lock(cache_mutex_);
    if (cache_.size() < kBpeCacheEntries) {
      cache_.emplace(std::string(bytes), std::vector<int32_t>(ids->begin() + first, ids->end()));
    }
  }
}

void BpeModel::Merge(std::string_view bytes, std::vector<int32_t>* ids) const {
  thread_local MergeScratch scratch;
  std::vector<Symbol>& symbols = scratch.symbols;
  symbols.clear();
  for (char c : bytes) {
    const int32_t id = byte_ids_[static_cast<uint8_t>(c)];
    if (id < 0) {
      if (unk_id_ < 0) continue;  // no unk_token: the byte is dropped
      if (fuse_unk_ && !symbols.empty() && symbols.back().id == unk_id_) continue;
      symbols.push_back({unk_id_, 0, 0, true});
    } else {
      symbols.push_back({id, 0, 0, true});
    }
  }
  const auto n = static_cast<int32_t>(symbols.size());
  for (int32_t i = 0; i < n; ++i) {
    symbols[i].prev = i - 1;
    symbols[i].next = i + 1 < n ? i + 1 : -1;
  }
  std::vector<Candidate>& heap = scratch.heap;
  heap.clear();
  const auto push = [&](int32_t pos) {
    const int32_t next = symbols[pos].next;
    if (next < 0) return;
    if (const PairMap::Value* m = merges_->Find(symbols[pos].id, symbols[next].id)) {
      heap.push_back({m->rank, pos, m->id});
      std::push_heap(heap.begin(), heap.end(), std::greater<>());
    }
  };
  for (int32_t i = 0; i + 1 < n; ++i) push(i);
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), std::greater<>());
    const Candidate top = heap.back();
    heap.pop_back();
    Symbol& left = symbols[top.pos];
    if (!left.alive || left.next < 0) continue;
    Symbol& right = symbols[left.next];
    // A stale entry: the pair at this position changed since it was queued.
    const PairMap::Value* m = merges_->Find(left.id, right.id);
    if (m == nullptr || m->id != top.id) continue;
    left.id = top.id;
    right.alive = false;
    left.next = right.next;
    if (right.next >= 0) symbols[right.next].prev = top.pos;
    if (left.prev >= 0) push(left.prev);
    push(top.pos);
  }
  for (int32_t i = n > 0 ? 0 : -1; i >= 0; i = symbols[i].next) ids->push_back(symbols[i].id);
}

}  // namespace mineru::text
