// SPDX-License-Identifier: Apache-2.0
// Next-token selection with exactly the request fields MinerU's client sends a server
// (OpenAI/vLLM names, docs/MINERU.md section 2.5): temperature, top_p, top_k, presence/frequency
// penalties, repetition_penalty and vllm_xargs.no_repeat_ngram_size, plus a seed, and OpenAI's
// logit_bias.
//
// Sampler::Next applies the rules to one row of logits in this order:
//   0. logit_bias added to its tokens (vLLM v1 vllm/v1/sample/sampler.py applies its logit-bias
//      processor before the penalties),
//   1. repetition_penalty over distinct prompt + output tokens (Hugging Face / vLLM),
//   2. frequency and presence penalties over output tokens (OpenAI / vLLM),
//   3. no-repeat n-gram ban over output tokens (MinerU's vLLM logits processor),
//   4. greedy pick when temperature < kGreedyTemperature or top_k == 1; otherwise
//   5. logits /= temperature,
//   6. top_k: tokens below the k-th largest value get -inf (ties with it are all kept, as in
//      vLLM's apply_top_k_top_p),
//   7. top_p: over the softmax of what is left, sorted descending (ties: lower id first), the
//      smallest prefix whose cumulative probability reaches top_p (within 1e-6) is kept,
//   8. draw: u = (mt19937_64() >> 11) * 2^-53, then the first token in ascending id order whose
//      cumulative weight exp(x - max) exceeds u * total.
// Bans write -inf, which every later rule keeps at -inf, so 3 commutes with 1 and 2.
//
// Generic: MinerU's per-request-kind parameter sets are the pipeline's
// (pipeline/sampling_presets.h).
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/status.h"

namespace mineru::engine {

// Temperatures below this are greedy, as in vLLM (_SAMPLING_EPS = 1e-5): dividing by such a
// value only overflows, and the limit of the distribution is the argmax anyway.
inline constexpr float kGreedyTemperature = 1e-5f;
// OpenAI's range for a logit_bias value (vLLM clamps to it).
inline constexpr float kMaxLogitBias = 100.0f;

struct SamplingParams {
  float temperature = 0.0f;          // >= 0; below kGreedyTemperature = greedy
  float top_p = 1.0f;                // (0, 1]; 1 = off
  int32_t top_k = 0;                 // 0 or -1 = off (vLLM uses -1), else >= 1
  float presence_penalty = 0.0f;     // [-2, 2], OpenAI/vLLM, over output tokens
  float frequency_penalty = 0.0f;    // [-2, 2], OpenAI/vLLM, over output tokens
  float repetition_penalty = 1.0f;   // > 0, 1 = off; Hugging Face, over prompt + output tokens
  int32_t no_repeat_ngram_size = 0;  // >= 0, 0 = off; over output tokens only
  std::optional<uint64_t> seed;      // same seed + same logits -> same tokens; unset = random
  // (token id, bias) pairs, ids distinct and >= 0 (the engine checks them against the
  // vocabulary), biases finite in [-kMaxLogitBias, kMaxLogitBias]. Costs one addition a pair
  // per step.
  std::vector<std::pair<int32_t, float>> logit_bias;

  // kInvalidArgument naming the field and its allowed range when a value is out of range,
  // NaN or infinite.
  Status Validate() const;

  bool greedy() const { return temperature < kGreedyTemperature || top_k == 1; }
};

// Per-sequence sampling state: output tokens, their counts, the n-gram table and the random
// generator. Not thread-safe; one per sequence, used by the engine thread. Memory is
// O(distinct prompt tokens + output length) (plus vocab / 8 bytes when repetition_penalty != 1);
// scratch for sampling with temperature is shared per thread, not held per sequence.
class Sampler {
 public:
  // `params` must pass Validate() (checked: callers validate requests first). `prompt`: the
  // prompt token ids, used only by repetition_penalty; ids outside [0, vocab) are ignored.
  // `vocab`: the logits length (> 0).
  Sampler(const SamplingParams& params, std::span<const int32_t> prompt, int64_t vocab);

  // Applies rules 0-7 to `logits` (size vocab) in place and returns the chosen token. Greedy:
  // logits hold the penalised and banned values. Sampling: also divided by the temperature,
  // with tokens outside top_k / top_p set to -inf.
  //
  // Choice: the largest logit, ties to the lowest id, NaN never chosen (ops::ArgMax). When no
  // token can be chosen (every logit -inf or NaN, e.g. all banned) the result is the lowest id
  // whose logit is not NaN, else 0: torch.argmax's answer, so the engine never crashes and the
  // caller's stop/length rules still end the sequence. A sampled step whose largest logit is
  // +inf returns the lowest id holding +inf (the softmax is undefined there).
  //
  // Next does not record the token: call Accept(token) for what the sequence emits.
  int32_t Next(std::span<float> logits);

  // Records a token the sequence emitted: updates counts, the repetition set and the n-gram
  // table in O(no_repeat_ngram_size) (amortised). Ids outside [0, vocab) are kept in output()
  // and take part in n-grams but penalise nothing.
  void Accept(int32_t token);

  const std::vector<int32_t>& output() const { return output_; }
  const SamplingParams& params() const { return params_; }

 private:
  // One distinct (n-1)-token prefix seen in the output and the distinct tokens that followed
  // it. The prefix is output_[start, start + n - 1). Most prefixes of a long n are followed by
  // one token only, so the first follower is stored inline and only later ones allocate.
  struct NgramGroup {
    int64_t start = 0;
    int32_t next_in_bucket = -1;  // index into groups_ of the next group with the same hash
    int32_t first_follower = 0;
    std::vector<int32_t> more_followers;  // sorted, distinct, never first_follower
  };

  void ApplyPenalties(std::span<float> logits) const;
  void ApplyNgramBan(std::span<float> logits) const;
  // The group whose prefix equals output_[start, start + n - 1) (hash `hash`), or -1.
  int32_t FindGroup(uint64_t hash, int64_t start) const;
  int32_t Sample(std::span<float> logits);
  void MarkRepeated(int32_t token);

  SamplingParams params_;
  int64_t vocab_;
  std::vector<int32_t> output_;

  // repetition_penalty: a bit per vocab id set for every token of prompt + output, and the
  // distinct ids in first-seen order (so a step touches only those).
  std::vector<uint64_t> repeated_bits_;
  std::vector<int32_t> repeated_ids_;

  // frequency/presence: count of each distinct output token.
  std::unordered_map<int32_t, int32_t> output_counts_;

  // no_repeat_ngram_size n: hash of an (n-1)-gram -> first group of its bucket. The hash is a
  // polynomial over (token + 1) modulo 2^61 - 1; collisions are resolved by comparing tokens.
  std::unordered_map<uint64_t, int32_t> ngram_buckets_;
  std::vector<NgramGroup> groups_;
  uint64_t window_hash_ = 0;  // hash of the last n-1 output tokens (valid once there are n-1)
  uint64_t base_pow_ = 1;     // kBase^(n-1) mod 2^61 - 1, to drop the oldest window token

  std::mt19937_64 rng_;
};

}  // namespace mineru::engine
