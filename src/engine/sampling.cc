// SPDX-License-Identifier: Apache-2.0
#include "engine/sampling.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <vector>

#include "ops/elementwise.h"

namespace mineru::engine {
namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();
constexpr float kPosInf = std::numeric_limits<float>::infinity();
// Absolute slack on top_p's cumulative probability (see Sample).
constexpr double kTopPSlack = 1e-6;

// Polynomial hash of (n-1)-grams modulo the Mersenne prime 2^61 - 1. Token t contributes
// t + 1 (as unsigned 32 bits, so out-of-range ids hash too), which is never 0 and < 2^33.
constexpr uint64_t kMod = (uint64_t{1} << 61) - 1;
constexpr uint64_t kBase = 0x0123456789abcdefULL % kMod;

uint64_t MulMod(uint64_t a, uint64_t b) {
  const unsigned __int128 product = static_cast<unsigned __int128>(a) * b;
  uint64_t r = static_cast<uint64_t>(product & kMod) + static_cast<uint64_t>(product >> 61);
  r = (r & kMod) + (r >> 61);
  return r >= kMod ? r - kMod : r;
}
uint64_t AddMod(uint64_t a, uint64_t b) {
  const uint64_t r = a + b;  // both < 2^61: no overflow
  return r >= kMod ? r - kMod : r;
}
uint64_t SubMod(uint64_t a, uint64_t b) { return a >= b ? a - b : a + kMod - b; }
// base^exponent mod 2^61 - 1 by squaring: O(log exponent) multiplications, so a request's
// no_repeat_ngram_size costs nothing to set up whatever its value (a loop of exponent
// multiplications took 6.6 s for 2^31 - 1).
uint64_t PowMod(uint64_t base, uint64_t exponent) {
  uint64_t result = 1;
  for (; exponent > 0; exponent >>= 1) {
    if ((exponent & 1) != 0) result = MulMod(result, base);
    base = MulMod(base, base);
  }
  return result;
}
uint64_t TokenValue(int32_t token) { return uint64_t{static_cast<uint32_t>(token)} + 1; }

// Uniform double in [0, 1) from the top 53 bits of one 64-bit draw: exact and identical on
// every platform (std::uniform_real_distribution's algorithm is implementation-defined).
double UniformFromBits(uint64_t bits) { return static_cast<double>(bits >> 11) * 0x1.0p-53; }

// A token still in the running when sampling: its value after temperature and its softmax
// weight exp(value - max).
struct Candidate {
  double weight;
  float value;
  int32_t id;
};

// Per-thread scratch for Sample, so hundreds of sequences do not each hold vocab-sized buffers.
struct Scratch {
  std::vector<Candidate> candidates;  // ascending id order
  std::vector<Candidate> ranked;      // top_p's reordered copy
  std::vector<float> values;
};
Scratch& ThreadScratch() {
  thread_local Scratch scratch;
  return scratch;
}

// Reorders `c` so that its first `keep` entries are, in descending order (value descending,
// ties: lower id first), the smallest prefix whose cumulative weight reaches `target`, and
// returns keep (all of c when rounding keeps the sum short of target). Expected O(size):
// peaked distributions end within a partial sort of the top 256; flat ones fall through to a
// quickselect that halves the range holding the boundary, summing the weights of one half.
size_t TopPPrefix(std::vector<Candidate>& c, double target) {
  const auto before = [](const Candidate& a, const Candidate& b) {
    return a.value > b.value || (a.value == b.value && a.id < b.id);
  };
  const size_t size = c.size();
  const size_t head = std::min<size_t>(size, 256);
  std::partial_sort(c.begin(), c.begin() + head, c.end(), before);
  double cumulative = 0.0;
  for (size_t j = 0; j < head; ++j) {
    cumulative += c[j].weight;
    if (cumulative >= target) return j + 1;
  }
  // Invariant: every entry of [0, lo) precedes every entry of [lo, hi), which precede
  // [hi, size); `cumulative` is the weight of [0, lo) and the boundary lies in [lo, hi).
  size_t lo = head;
  size_t hi = size;
  while (hi - lo > 64) {
    const size_t mid = lo + (hi - lo) / 2;
    std::nth_element(c.begin() + lo, c.begin() + mid, c.begin() + hi, before);
    double left = 0.0;
    for (size_t j = lo; j < mid; ++j) left += c[j].weight;
    if (cumulative + left >= target) {
      hi = mid;
    } else {
      cumulative += left;
      lo = mid;
    }
  }
  std::sort(c.begin() + lo, c.begin() + hi, before);
  for (size_t j = lo; j < hi; ++j) {
    cumulative += c[j].weight;
    if (cumulative >= target) return j + 1;
  }
  return hi;
}

bool InRange(float v, float lo, float hi) { return std::isfinite(v) && v >= lo && v <= hi; }

}  // namespace

Status SamplingParams::Validate() const {
  if (!std::isfinite(temperature) || temperature < 0.0f) {
    return Fail(ErrorCode::kInvalidArgument, "temperature must be finite and >= 0, got {}",
                temperature);
  }
  if (!std::isfinite(top_p) || top_p <= 0.0f || top_p > 1.0f) {
    return Fail(ErrorCode::kInvalidArgument, "top_p must be in (0, 1], got {}", top_p);
  }
  if (top_k < -1) {
    return Fail(ErrorCode::kInvalidArgument, "top_k must be -1 or 0 (off) or >= 1, got {}", top_k);
  }
  if (!InRange(presence_penalty, -2.0f, 2.0f)) {
    return Fail(ErrorCode::kInvalidArgument, "presence_penalty must be in [-2, 2], got {}",
                presence_penalty);
  }
  if (!InRange(frequency_penalty, -2.0f, 2.0f)) {
    return Fail(ErrorCode::kInvalidArgument, "frequency_penalty must be in [-2, 2], got {}",
                frequency_penalty);
  }
  if (!std::isfinite(repetition_penalty) || repetition_penalty <= 0.0f) {
    return Fail(ErrorCode::kInvalidArgument, "repetition_penalty must be finite and > 0, got {}",
                repetition_penalty);
  }
  if (no_repeat_ngram_size < 0) {
    return Fail(ErrorCode::kInvalidArgument, "no_repeat_ngram_size must be >= 0 (0 = off), got {}",
                no_repeat_ngram_size);
  }
  for (size_t i = 0; i < logit_bias.size(); ++i) {
    const auto [token, bias] = logit_bias[i];
    if (token < 0) {
      return Fail(ErrorCode::kInvalidArgument, "logit_bias token {} must be >= 0", token);
    }
    if (!InRange(bias, -kMaxLogitBias, kMaxLogitBias)) {
      return Fail(ErrorCode::kInvalidArgument,
                  "logit_bias of token {} must be in [-100, 100], got {}", token, bias);
    }
  }
  // Distinct ids: sorted copies compared pairwise (O(k log k), k bounded by the caller).
  std::vector<int32_t> ids;
  ids.reserve(logit_bias.size());
  for (const auto& entry : logit_bias) ids.push_back(entry.first);
  std::sort(ids.begin(), ids.end());
  if (const auto dup = std::adjacent_find(ids.begin(), ids.end()); dup != ids.end()) {
    return Fail(ErrorCode::kInvalidArgument, "logit_bias names token {} twice", *dup);
  }
  return OkStatus();
}

Sampler::Sampler(const SamplingParams& params, std::span<const int32_t> prompt, int64_t vocab)
    : params_(params), vocab_(vocab) {
  const Status valid = params.Validate();
  MINERU_CHECK(valid.has_value(), "{}", valid.error().message);
  MINERU_CHECK(vocab > 0 && vocab <= std::numeric_limits<int32_t>::max(), "vocab {}", vocab);
  if (params_.repetition_penalty != 1.0f) {
    repeated_bits_.assign(static_cast<size_t>((vocab + 63) / 64), 0);
    for (int32_t token : prompt) MarkRepeated(token);
  }
  if (params_.no_repeat_ngram_size > 1) base_pow_ = PowMod(kBase, params_.no_repeat_ngram_size - 1);
  if (params_.seed.has_value()) {
    rng_.seed(*params_.seed);
  } else {
    std::random_device device;
    rng_.seed((uint64_t{device()} << 32) ^ uint64_t{device()});
  }
}

void Sampler::MarkRepeated(int32_t token) {
  if (token < 0 || token >= vocab_) return;
  uint64_t& word = repeated_bits_[static_cast<size_t>(token) / 64];
  const uint64_t bit = uint64_t{1} << (token % 64);
  if ((word & bit) != 0) return;
  word |= bit;
  repeated_ids_.push_back(token);
}

int32_t Sampler::FindGroup(uint64_t hash, int64_t start) const {
  const auto it = ngram_buckets_.find(hash);
  if (it == ngram_buckets_.end()) return -1;
  const int64_t m = params_.no_repeat_ngram_size - 1;
  for (int32_t g = it->second; g != -1; g = groups_[g].next_in_bucket) {
    // Exact comparison: two prefixes with equal hashes may still differ.
    if (std::equal(output_.begin() + groups_[g].start, output_.begin() + groups_[g].start + m,
                   output_.begin() + start)) {
      return g;
    }
  }
  return -1;
}

void Sampler::Accept(int32_t token) {
  const int64_t n = params_.no_repeat_ngram_size;
  const int64_t length = static_cast<int64_t>(output_.size());
  if (n > 0) {
    const int64_t m = n - 1;
    // The n-gram output_[length - m, length) + token completes: record prefix -> token. Its
    // prefix is the current window, whose hash is window_hash_ (0 for the empty prefix).
    if (length >= m) {
      int32_t g = FindGroup(window_hash_, length - m);
      if (g == -1) {
        g = static_cast<int32_t>(groups_.size());
        auto [it, inserted] = ngram_buckets_.try_emplace(window_hash_, g);
        NgramGroup group;
        group.start = length - m;
        group.next_in_bucket = inserted ? -1 : it->second;
        group.first_follower = token;
        it->second = g;
        groups_.push_back(std::move(group));
      } else if (groups_[g].first_follower != token) {
        std::vector<int32_t>& more = groups_[g].more_followers;
        const auto pos = std::lower_bound(more.begin(), more.end(), token);
        if (pos == more.end() || *pos != token) more.insert(pos, token);
      }
    }
    // Slide the window over the last m tokens: shift in `token`, drop output_[length - m].
    if (m > 0) {
      window_hash_ = AddMod(MulMod(window_hash_, kBase), TokenValue(token));
      if (length >= m) {
        window_hash_ = SubMod(window_hash_, MulMod(TokenValue(output_[length - m]), base_pow_));
      }
    }
  }
  output_.push_back(token);
  if (params_.repetition_penalty != 1.0f) MarkRepeated(token);
  if ((params_.frequency_penalty != 0.0f || params_.presence_penalty != 0.0f) && token >= 0 &&
      token < vocab_) {
    ++output_counts_[token];
  }
}

void Sampler::ApplyPenalties(std::span<float> logits) const {
  // Hugging Face RepetitionPenaltyLogitsProcessor (and vLLM apply_penalties): every distinct
  // token of prompt + output, once: positive logits are divided by the penalty, the others
  // multiplied, so a penalty > 1 always makes the token less likely.
  const float rep = params_.repetition_penalty;
  if (rep != 1.0f) {
    for (int32_t token : repeated_ids_) {
      float& x = logits[token];
      x = x > 0.0f ? x / rep : x * rep;
    }
  }
  // OpenAI / vLLM: logit -= frequency * count + presence * (count > 0) over output tokens,
  // as two float subtractions in vLLM's order.
  const float frequency = params_.frequency_penalty;
  const float presence = params_.presence_penalty;
  if (frequency != 0.0f || presence != 0.0f) {
    for (const auto& [token, count] : output_counts_) {
      float& x = logits[token];
      x -= frequency * static_cast<float>(count);
      x -= presence;
    }
  }
}

void Sampler::ApplyNgramBan(std::span<float> logits) const {
  // MinerU's VllmV1NoRepeatNGramLogitsProcessor (mineru_vl_utils
  // logits_processor/vllm_v1_no_repeat_ngram.py), i.e. Hugging Face NoRepeatNGramLogitsProcessor
  // over output tokens only: every token that followed the current (n-1)-token suffix in an
  // earlier n-gram of the output gets -inf. n = 1 bans every token already output (the Hugging
  // Face meaning; MinerU's Python slices the whole output as the "suffix" there and bans
  // nothing, but MinerU only sends n = 100).
  const int64_t n = params_.no_repeat_ngram_size;
  const int64_t length = static_cast<int64_t>(output_.size());
  if (n <= 0 || length < n - 1) return;
  const int32_t g = FindGroup(window_hash_, length - (n - 1));
  if (g == -1) return;
  const auto ban = [&](int32_t token) {
    if (token >= 0 && token < vocab_) logits[token] = kNegInf;
  };
  ban(groups_[g].first_follower);
  for (int32_t token : groups_[g].more_followers) ban(token);
}

int32_t Sampler::Next(std::span<float> logits) {
  MINERU_CHECK(static_cast<int64_t>(logits.size()) == vocab_, "logits size {} != vocab {}",
               logits.size(), vocab_);
  for (const auto& [token, bias] : params_.logit_bias) {
    if (token < vocab_) logits[token] += bias;  // ids past the logits: nothing to bias
  }
  ApplyPenalties(logits);
  ApplyNgramBan(logits);
  if (params_.greedy()) {
    // Largest logit, ties to the lowest id, NaN never wins; with every logit -inf or NaN this
    // is the lowest non-NaN id (else 0), the documented fallback.
    return static_cast<int32_t>(ops::ArgMax(logits.data(), vocab_));
  }
  return Sample(logits);
}

int32_t Sampler::Sample(std::span<float> logits) {
  const float temperature = params_.temperature;
  Scratch& scratch = ThreadScratch();
  std::vector<Candidate>& candidates = scratch.candidates;
  candidates.clear();

  // Temperature, in place as vLLM does (logits.div_(temperature)). NaN becomes -inf so it is
  // never drawn. Candidates: tokens above -inf, in ascending id order.
  int32_t first_not_nan = -1;
  int32_t first_pos_inf = -1;
  float max_value = kNegInf;
  for (int64_t i = 0; i < vocab_; ++i) {
    float& x = logits[i];
    if (std::isnan(x)) {
      x = kNegInf;
      continue;
    }
    if (first_not_nan < 0) first_not_nan = static_cast<int32_t>(i);
    x /= temperature;
    if (x == kNegInf) continue;
    if (x == kPosInf && first_pos_inf < 0) first_pos_inf = static_cast<int32_t>(i);
    max_value = std::max(max_value, x);
    candidates.push_back({0.0, x, static_cast<int32_t>(i)});
  }
  if (candidates.empty()) return first_not_nan >= 0 ? first_not_nan : 0;
  if (first_pos_inf >= 0) return first_pos_inf;

  // top_k (vLLM apply_top_k_top_p): keep every token whose value is >= the k-th largest value,
  // so tokens tied with the k-th are all kept (possibly more than k).
  const int64_t k = params_.top_k;
  if (k > 1 && k < static_cast<int64_t>(candidates.size())) {
    std::vector<float>& values = scratch.values;
    values.clear();
    for (const Candidate& c : candidates) values.push_back(c.value);
    std::nth_element(values.begin(), values.begin() + (k - 1), values.end(), std::greater<>());
    const float threshold = values[k - 1];
    size_t kept = 0;
    for (const Candidate& c : candidates) {
      if (c.value >= threshold) {
        candidates[kept++] = c;
      } else {
        logits[c.id] = kNegInf;
      }
    }
    candidates.resize(kept);
  }

  // Softmax weights exp(x - max) in double; the largest candidate survives top_k, so max_value
  // is still the maximum.
  double total = 0.0;
  for (Candidate& c : candidates) {
    c.weight = std::exp(static_cast<double>(c.value) - max_value);
    total += c.weight;
  }

  // top_p (vLLM semantics): in descending order of value (ties: lower id first), keep the
  // smallest prefix whose cumulative probability is >= top_p - kTopPSlack; at least one token.
  if (params_.top_p < 1.0f && candidates.size() > 1) {
    // top_p reaches us as a float32 (0.8f is 0.800000012): a cumulative within kTopPSlack of
    // it counts as reached, so a boundary the user wrote exactly (0.5 + 0.3 for 0.8) keeps
    // the prefix it names instead of depending on rounding.
    const double target = (static_cast<double>(params_.top_p) - kTopPSlack) * total;
    // The prefix is found on a copy so `candidates` keeps its ascending id order.
    std::vector<Candidate>& ranked = scratch.ranked;
    ranked.assign(candidates.begin(), candidates.end());
    const size_t keep = TopPPrefix(ranked, target);
    for (size_t j = keep; j < ranked.size(); ++j) logits[ranked[j].id] = kNegInf;
    size_t kept = 0;
    total = 0.0;
    for (const Candidate& c : candidates) {
      if (logits[c.id] == kNegInf) continue;
      candidates[kept++] = c;
      total += c.weight;
    }
    candidates.resize(kept);
  }

  // Draw: u uniform in [0, 1) from one 64-bit output of mt19937_64 (fully specified by the C++
  // standard), then the first candidate in ascending id order whose cumulative weight exceeds
  // u * total. The same seed and logits give the same tokens on every machine, up to
  // last-bit differences of libm's exp.
  const double target = UniformFromBits(rng_()) * total;
  double cumulative = 0.0;
  for (const Candidate& c : candidates) {
    cumulative += c.weight;
    if (cumulative > target) return c.id;
  }
  return candidates.back().id;  // unreachable: the last cumulative equals total > target
}

}  // namespace mineru::engine
