// SPDX-License-Identifier: Apache-2.0
// Sampler rules on hand-computed logits, the incremental n-gram ban against a brute-force
// scan, seeded draws, Validate and MinerU's presets.
#include "engine/sampling.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace mineru::engine {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

SamplingParams Greedy() { return SamplingParams{}; }

SamplingParams Sampled(float temperature, uint64_t seed = 1) {
  SamplingParams p;
  p.temperature = temperature;
  p.seed = seed;
  return p;
}

// Runs Next on a copy of `logits` and returns the processed copy.
std::vector<float> Processed(Sampler& sampler, std::vector<float> logits,
                             int32_t* token = nullptr) {
  const int32_t t = sampler.Next(logits);
  if (token != nullptr) *token = t;
  return logits;
}

std::vector<float> Log(const std::vector<double>& probs) {
  std::vector<float> logits;
  for (double p : probs) logits.push_back(static_cast<float>(std::log(p)));
  return logits;
}

// Ids whose processed logit is above -inf.
std::set<int32_t> Kept(const std::vector<float>& logits) {
  std::set<int32_t> kept;
  for (size_t i = 0; i < logits.size(); ++i) {
    if (logits[i] > -kInf) kept.insert(static_cast<int32_t>(i));
  }
  return kept;
}

// The Hugging Face rule restricted to the output, scanned directly: O(L * n).
std::set<int32_t> BruteForceBanned(const std::vector<int32_t>& out, int n) {
  std::set<int32_t> banned;
  const int64_t length = static_cast<int64_t>(out.size());
  if (length < n - 1) return banned;
  for (int64_t i = 0; i + n <= length; ++i) {
    bool same = true;
    for (int j = 0; j < n - 1 && same; ++j) same = out[i + j] == out[length - n + 1 + j];
    if (same) banned.insert(out[i + n - 1]);
  }
  return banned;
}

std::set<int32_t> BannedBy(Sampler& sampler, int64_t vocab) {
  std::vector<float> logits(vocab, 0.0f);
  sampler.Next(logits);
  std::set<int32_t> banned;
  for (int64_t i = 0; i < vocab; ++i) {
    if (logits[i] == -kInf) banned.insert(static_cast<int32_t>(i));
  }
  return banned;
}

// ---- repetition, frequency and presence penalties ----

TEST(SamplingTest, RepetitionPenaltyDividesPositiveMultipliesNegative) {
  SamplingParams p = Greedy();
  p.repetition_penalty = 2.0f;
  const std::vector<int32_t> prompt = {0, 1};
  Sampler sampler(p, prompt, 4);
  int32_t token = -1;
  EXPECT_EQ(Processed(sampler, {2.0f, -1.0f, 0.5f, 3.0f}, &token),
            (std::vector<float>{1.0f, -2.0f, 0.5f, 3.0f}));
  EXPECT_EQ(token, 3);
  EXPECT_TRUE(sampler.output().empty());  // Next does not record
}

TEST(SamplingTest, RepetitionPenaltyCountsOutputAndEachTokenOnce) {
  SamplingParams p = Greedy();
  p.repetition_penalty = 2.0f;
  const std::vector<int32_t> prompt = {0, 0, 0, -5, 99};  // out-of-range ids are ignored
  Sampler sampler(p, prompt, 4);
  sampler.Accept(3);
  sampler.Accept(3);
  sampler.Accept(0);
  // 2 / 2 once (not 2 / 8); 3 only via the output; 0 stays 0.
  EXPECT_EQ(Processed(sampler, {2.0f, 0.0f, 0.5f, 3.0f}),
            (std::vector<float>{1.0f, 0.0f, 0.5f, 1.5f}));
}

TEST(SamplingTest, RepetitionPenaltyBelowOneFavoursRepeats) {
  SamplingParams p = Greedy();
  p.repetition_penalty = 0.5f;
  const std::vector<int32_t> prompt = {0, 1};
  Sampler sampler(p, prompt, 3);
  EXPECT_EQ(Processed(sampler, {2.0f, -1.0f, 3.0f}), (std::vector<float>{4.0f, -0.5f, 3.0f}));
}

TEST(SamplingTest, FrequencyAndPresenceOverOutputCounts) {
  SamplingParams p = Greedy();
  p.frequency_penalty = 0.5f;
  p.presence_penalty = 1.0f;
  const std::vector<int32_t> prompt = {3, 3, 3};  // the prompt does not count
  Sampler sampler(p, prompt, 4);
  EXPECT_EQ(Processed(sampler, {0.0f, 0.0f, 0.0f, 0.0f}), (std::vector<float>(4, 0.0f)));
  sampler.Accept(1);
  sampler.Accept(1);
  sampler.Accept(2);
  // token 1: 0 - 0.5 * 2 - 1 = -2; token 2: 0 - 0.5 * 1 - 1 = -1.5.
  int32_t token = -1;
  EXPECT_EQ(Processed(sampler, {0.0f, 0.0f, 0.0f, 0.0f}, &token),
            (std::vector<float>{0.0f, -2.0f, -1.5f, 0.0f}));
  EXPECT_EQ(token, 0);
  sampler.Accept(1);
  // token 1 now seen 3 times: 1 - 1.5 - 1 = -1.5.
  EXPECT_EQ(Processed(sampler, {1.0f, 1.0f, 1.0f, 1.0f}),
            (std::vector<float>{1.0f, -1.5f, -0.5f, 1.0f}));
}

TEST(SamplingTest, NegativePenaltiesFavourOutputTokens) {
  SamplingParams p = Greedy();
  p.frequency_penalty = -0.25f;
  p.presence_penalty = -2.0f;
  Sampler sampler(p, {}, 3);
  sampler.Accept(2);
  sampler.Accept(2);
  int32_t token = -1;
  EXPECT_EQ(Processed(sampler, {2.0f, 0.0f, 0.0f}, &token), (std::vector<float>{2.0f, 0.0f, 2.5f}));
  EXPECT_EQ(token, 2);
}

TEST(SamplingTest, RepetitionIsAppliedBeforeFrequency) {
  SamplingParams p = Greedy();
  p.repetition_penalty = 2.0f;
  p.frequency_penalty = 1.0f;
  Sampler sampler(p, {}, 2);
  sampler.Accept(0);
  // 2 / 2 - 1 = 0 (the other order would give (2 - 1) / 2 = 0.5 and pick token 0).
  int32_t token = -1;
  EXPECT_EQ(Processed(sampler, {2.0f, 0.25f}, &token), (std::vector<float>{0.0f, 0.25f}));
  EXPECT_EQ(token, 1);
}

// ---- no-repeat n-gram ----

TEST(SamplingTest, NgramSizeOneBansEveryOutputToken) {
  SamplingParams p = Greedy();
  p.no_repeat_ngram_size = 1;
  Sampler sampler(p, {}, 5);
  EXPECT_EQ(BannedBy(sampler, 5), (std::set<int32_t>{}));
  sampler.Accept(2);
  sampler.Accept(0);
  sampler.Accept(2);
  EXPECT_EQ(BannedBy(sampler, 5), (std::set<int32_t>{0, 2}));
}

TEST(SamplingTest, NgramSizeTwoBansFollowersOfLastToken) {
  SamplingParams p = Greedy();
  p.no_repeat_ngram_size = 2;
  Sampler sampler(p, {}, 6);
  for (int32_t t : {1, 2, 1}) sampler.Accept(t);
  EXPECT_EQ(BannedBy(sampler, 6), (std::set<int32_t>{2}));  // (1, 2) seen
  for (int32_t t : {3, 1}) sampler.Accept(t);
  EXPECT_EQ(BannedBy(sampler, 6), (std::set<int32_t>{2, 3}));  // (1, 2), (1, 3) seen
  sampler.Accept(4);
  EXPECT_EQ(BannedBy(sampler, 6), (std::set<int32_t>{}));  // 4 never followed by anything
  // Greedy skips the banned best token.
  sampler.Accept(1);
  int32_t token = -1;
  // 2, 3 and 4 have followed 1: the best token left is 1.
  Processed(sampler, {0.0f, 5.0f, 9.0f, 8.0f, 7.0f, 1.0f}, &token);
  EXPECT_EQ(token, 1);
}

TEST(SamplingTest, NgramSizeThree) {
  SamplingParams p = Greedy();
  p.no_repeat_ngram_size = 3;
  Sampler sampler(p, {}, 10);
  sampler.Accept(5);
  EXPECT_EQ(BannedBy(sampler, 10), (std::set<int32_t>{}));  // fewer than n - 1 tokens
  for (int32_t t : {6, 7, 5}) sampler.Accept(t);
  EXPECT_EQ(BannedBy(sampler, 10), (std::set<int32_t>{}));  // suffix (7, 5) is new
  sampler.Accept(6);
  EXPECT_EQ(BannedBy(sampler, 10), (std::set<int32_t>{7}));  // (5, 6) -> 7 seen
  sampler.Accept(8);
  sampler.Accept(5);
  sampler.Accept(6);
  EXPECT_EQ(BannedBy(sampler, 10), (std::set<int32_t>{7, 8}));
}

TEST(SamplingTest, NgramOnlyCountsOutputNotPrompt) {
  SamplingParams p = Greedy();
  p.no_repeat_ngram_size = 2;
  const std::vector<int32_t> prompt = {1, 2, 1, 3};
  Sampler sampler(p, prompt, 4);
  sampler.Accept(1);
  EXPECT_EQ(BannedBy(sampler, 4), (std::set<int32_t>{}));
}

TEST(SamplingTest, NgramHundredOnLongPeriodicOutput) {
  constexpr int kN = 100;
  constexpr int kPeriod = 7;
  constexpr int64_t kVocab = 16;
  SamplingParams p = Greedy();
  p.no_repeat_ngram_size = kN;
  Sampler sampler(p, {}, kVocab);
  std::vector<int32_t> out;
  for (int64_t length = 0; length < 1200; ++length) {
    const std::set<int32_t> banned = BannedBy(sampler, kVocab);
    // The 99-token suffix first repeats once the output holds kN - 1 + kPeriod tokens; from
    // then on exactly the next token of the cycle is banned.
    if (length >= kN - 1 + kPeriod) {
      ASSERT_EQ(banned, (std::set<int32_t>{static_cast<int32_t>(length % kPeriod)}))
          << "length " << length;
    } else {
      ASSERT_TRUE(banned.empty()) << "length " << length;
    }
    ASSERT_EQ(banned, BruteForceBanned(out, kN)) << "length " << length;
    const int32_t token = static_cast<int32_t>(length % kPeriod);
    sampler.Accept(token);
    out.push_back(token);
  }
  EXPECT_EQ(sampler.output(), out);
}

TEST(SamplingTest, NgramMatchesBruteForceOnRandomOutputs) {
  std::mt19937 rng(7);
  for (int n : {1, 2, 3, 4, 7, 100}) {
    for (int alphabet : {2, 3, 8}) {
      SamplingParams p = Greedy();
      p.no_repeat_ngram_size = n;
      const int64_t vocab = 8;
      Sampler sampler(p, {}, vocab);
      std::vector<int32_t> out;
      std::uniform_int_distribution<int32_t> pick(0, alphabet - 1);
      const int steps = n == 100 ? 500 : 300;
      for (int step = 0; step < steps; ++step) {
        ASSERT_EQ(BannedBy(sampler, vocab), BruteForceBanned(out, n))
            << "n " << n << " alphabet " << alphabet << " step " << step;
        // Mostly a short repeating motif so long n-grams recur, with random noise.
        const int32_t token = step % 5 == 4 ? pick(rng) : static_cast<int32_t>(step % 3);
        sampler.Accept(token);
        out.push_back(token);
      }
    }
  }
}

TEST(SamplingTest, HugeNgramSizeCostsNothingToSetUpAndNeverBans) {
  // Reproduces issue 14: vllm_xargs.no_repeat_ngram_size = 2^31 - 1 (a 190-byte request) made
  // the sampler's constructor loop 2^31 times (6.6 CPU-seconds). The power it computed is now
  // taken by squaring, O(log n): a thousand such samplers took almost two hours before and take
  // milliseconds now (the test timeout is the guard). An n-gram longer than the output never
  // completes, so nothing is ever banned.
  SamplingParams p = Greedy();
  p.no_repeat_ngram_size = std::numeric_limits<int32_t>::max();
  for (int i = 0; i < 1000; ++i) {
    Sampler sampler(p, {}, 4);
    sampler.Accept(i % 4);
    ASSERT_TRUE(BannedBy(sampler, 4).empty());
  }
}

TEST(SamplingTest, NgramThousandMatchesBruteForce) {
  // The rolling hash drops its oldest token with base^(n-1), now computed by squaring: a long
  // window exercises it on every step.
  constexpr int kN = 1000;
  constexpr int64_t kVocab = 5;
  SamplingParams p = Greedy();
  p.no_repeat_ngram_size = kN;
  Sampler sampler(p, {}, kVocab);
  std::vector<int32_t> out;
  std::mt19937 rng(3);
  for (int step = 0; step < 2600; ++step) {
    if (step % 50 == 0 || step > 2000) {
      ASSERT_EQ(BannedBy(sampler, kVocab), BruteForceBanned(out, kN)) << "step " << step;
    }
    // A period-13 motif with rare noise: windows of 999 tokens recur.
    const int32_t token = step % 97 == 96 ? static_cast<int32_t>(rng() % kVocab)
                                          : static_cast<int32_t>((step * 7) % 13 % kVocab);
    sampler.Accept(token);
    out.push_back(token);
  }
}

// ---- logit bias ----

TEST(SamplingTest, LogitBiasIsAddedBeforeThePenalties) {
  SamplingParams p = Greedy();
  p.logit_bias = {{1, 3.0f}, {3, -100.0f}};
  p.repetition_penalty = 2.0f;
  Sampler sampler(p, std::vector<int32_t>{1}, 4);
  int32_t token = -1;
  // Token 1: (1 + 3) / 2 = 2 (bias first, then the repetition penalty divides a positive logit).
  const std::vector<float> out = Processed(sampler, {1.0f, 1.0f, 1.5f, 50.0f}, &token);
  EXPECT_FLOAT_EQ(out[0], 1.0f);
  EXPECT_FLOAT_EQ(out[1], 2.0f);
  EXPECT_FLOAT_EQ(out[3], -50.0f);
  EXPECT_EQ(token, 1);
}

TEST(SamplingTest, LogitBiasForcesATokenWhenSampling) {
  SamplingParams p = Sampled(1.0f, 9);
  p.logit_bias = {{2, 100.0f}};
  Sampler sampler(p, {}, 8);
  for (int i = 0; i < 50; ++i) {
    std::vector<float> logits(8, 0.0f);
    ASSERT_EQ(sampler.Next(logits), 2);  // e^100 against seven e^0
  }
}

TEST(SamplingTest, TopKPastTheVocabularyIsOff) {
  // top_k costs one selection over the vocabulary whatever its value; past the vocabulary it
  // keeps everything, exactly as top_k off.
  std::mt19937 rng(5);
  std::vector<float> logits(64);
  for (float& x : logits) x = static_cast<float>(rng() % 1000) / 100.0f;
  SamplingParams off = Sampled(0.8f, 11);
  SamplingParams huge = off;
  huge.top_k = std::numeric_limits<int32_t>::max();
  Sampler a(off, {}, 64), b(huge, {}, 64);
  for (int i = 0; i < 100; ++i) {
    std::vector<float> x = logits, y = logits;
    const int32_t ta = a.Next(x), tb = b.Next(y);
    ASSERT_EQ(ta, tb) << "step " << i;
    a.Accept(ta);
    b.Accept(tb);
  }
}

// ---- greedy ----

TEST(SamplingTest, GreedyTieGoesToLowestId) {
  Sampler sampler(Greedy(), {}, 4);
  std::vector<float> logits = {1.0f, 3.0f, 3.0f, 2.0f};
  EXPECT_EQ(sampler.Next(logits), 1);
}

TEST(SamplingTest, AllMinusInfinityFallsBackToLowestNonNanId) {
  for (const SamplingParams& p : {Greedy(), Sampled(1.0f)}) {
    Sampler sampler(p, {}, 3);
    std::vector<float> all_inf = {-kInf, -kInf, -kInf};
    EXPECT_EQ(sampler.Next(all_inf), 0);
    std::vector<float> nan_first = {kNaN, -kInf, -kInf};
    EXPECT_EQ(sampler.Next(nan_first), 1);
    std::vector<float> all_nan = {kNaN, kNaN, kNaN};
    EXPECT_EQ(sampler.Next(all_nan), 0);
  }
  // Every token banned by the n-gram rule.
  SamplingParams p = Greedy();
  p.no_repeat_ngram_size = 1;
  Sampler sampler(p, {}, 3);
  for (int32_t t : {2, 1, 0}) sampler.Accept(t);
  std::vector<float> logits = {1.0f, 2.0f, 3.0f};
  EXPECT_EQ(sampler.Next(logits), 0);
}

TEST(SamplingTest, NanIsNeverChosen) {
  Sampler greedy(Greedy(), {}, 4);
  std::vector<float> logits = {kNaN, 1.0f, kNaN, 2.0f};
  EXPECT_EQ(greedy.Next(logits), 3);
  Sampler sampled(Sampled(1.0f, 3), {}, 4);
  for (int i = 0; i < 2000; ++i) {
    std::vector<float> row = {kNaN, 0.0f, kNaN, 0.0f};
    const int32_t token = sampled.Next(row);
    ASSERT_TRUE(token == 1 || token == 3) << token;
  }
}

TEST(SamplingTest, PositiveInfinityWinsWhenSampling) {
  Sampler sampler(Sampled(1.0f), {}, 4);
  std::vector<float> logits = {0.0f, kInf, 5.0f, kInf};
  EXPECT_EQ(sampler.Next(logits), 1);
}

TEST(SamplingTest, TopKOneEqualsGreedyAtAnyTemperature) {
  std::mt19937 rng(11);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  for (float temperature : {0.0f, 0.5f, 1.0f, 7.0f, 100.0f}) {
    SamplingParams p = Sampled(temperature, 9);
    p.top_k = 1;
    Sampler sampler(p, {}, 1000);
    for (int trial = 0; trial < 50; ++trial) {
      std::vector<float> logits(1000);
      for (float& x : logits) x = normal(rng);
      int64_t best = 0;
      for (int64_t i = 1; i < 1000; ++i) {
        if (logits[i] > logits[best]) best = i;
      }
      ASSERT_EQ(sampler.Next(logits), best);
    }
  }
}

TEST(SamplingTest, GreedyBelowEpsilonTemperature) {
  SamplingParams p = Sampled(1e-6f);
  EXPECT_TRUE(p.greedy());
  Sampler sampler(p, {}, 3);
  std::vector<float> logits = {1.0f, 2.0f, 1.5f};
  EXPECT_EQ(sampler.Next(logits), 1);
  EXPECT_EQ(logits, (std::vector<float>{1.0f, 2.0f, 1.5f}));  // no temperature division
}

// ---- temperature, top_k, top_p ----

TEST(SamplingTest, TemperatureDividesLogits) {
  Sampler sampler(Sampled(2.0f), {}, 3);
  EXPECT_EQ(Processed(sampler, {1.0f, 2.0f, -3.0f}), (std::vector<float>{0.5f, 1.0f, -1.5f}));
}

TEST(SamplingTest, TopKKeepsLargestAfterTemperature) {
  SamplingParams p = Sampled(2.0f);
  p.top_k = 2;
  Sampler sampler(p, {}, 4);
  for (int i = 0; i < 100; ++i) {
    int32_t token = -1;
    EXPECT_EQ(Processed(sampler, {1.0f, 4.0f, 2.0f, 3.0f}, &token),
              (std::vector<float>{-kInf, 2.0f, -kInf, 1.5f}));
    ASSERT_TRUE(token == 1 || token == 3) << token;
  }
}

TEST(SamplingTest, TopKKeepsTiesAtTheBoundary) {
  SamplingParams p = Sampled(1.0f);
  p.top_k = 2;
  Sampler sampler(p, {}, 5);
  // Second largest is 2, held by two tokens: both kept (vLLM: mask values < k-th largest).
  EXPECT_EQ(Kept(Processed(sampler, {3.0f, 2.0f, 2.0f, 1.0f, 0.0f})), (std::set<int32_t>{0, 1, 2}));
  EXPECT_EQ(Kept(Processed(sampler, {1.0f, 3.0f, 3.0f, 0.0f, 3.0f})), (std::set<int32_t>{1, 2, 4}));
  // k past the candidates: nothing masked.
  p.top_k = 10;
  Sampler wide(p, {}, 5);
  EXPECT_EQ(Kept(Processed(wide, {3.0f, 2.0f, 2.0f, 1.0f, -kInf})),
            (std::set<int32_t>{0, 1, 2, 3}));
}

TEST(SamplingTest, TopPKeepsSmallestPrefixReachingP) {
  // Probabilities {0.5, 0.3, 0.15, 0.05} at temperature 1, listed out of order.
  const std::vector<float> logits = Log({0.15, 0.5, 0.05, 0.3});
  const auto kept = [&logits](float top_p) {
    SamplingParams p = Sampled(1.0f);
    p.top_p = top_p;
    Sampler sampler(p, {}, 4);
    return Kept(Processed(sampler, logits));
  };
  EXPECT_EQ(kept(0.3f), (std::set<int32_t>{1}));
  EXPECT_EQ(kept(0.49f), (std::set<int32_t>{1}));
  EXPECT_EQ(kept(0.51f), (std::set<int32_t>{1, 3}));
  EXPECT_EQ(kept(0.79f), (std::set<int32_t>{1, 3}));
  EXPECT_EQ(kept(0.8f), (std::set<int32_t>{1, 3}));
  EXPECT_EQ(kept(0.81f), (std::set<int32_t>{0, 1, 3}));
  EXPECT_EQ(kept(0.96f), (std::set<int32_t>{0, 1, 2, 3}));
  EXPECT_EQ(kept(1.0f), (std::set<int32_t>{0, 1, 2, 3}));
}

TEST(SamplingTest, TopPAppliesToTopKRenormalised) {
  // {0.4, 0.3, 0.2, 0.1}: top_p 0.5 alone keeps two (0.4 < 0.5); after top_k 2 the kept
  // probabilities are {4/7, 3/7} and 4/7 >= 0.5 keeps one.
  const std::vector<float> logits = Log({0.4, 0.3, 0.2, 0.1});
  SamplingParams p = Sampled(1.0f);
  p.top_p = 0.5f;
  Sampler only_p(p, {}, 4);
  EXPECT_EQ(Kept(Processed(only_p, logits)), (std::set<int32_t>{0, 1}));
  p.top_k = 2;
  Sampler k_then_p(p, {}, 4);
  int32_t token = -1;
  EXPECT_EQ(Kept(Processed(k_then_p, logits, &token)), (std::set<int32_t>{0}));
  EXPECT_EQ(token, 0);
}

TEST(SamplingTest, TopPOverLargeVocabulary) {
  // 151,936 tokens: 3 large and the rest tiny, so the sorted prefix stays short.
  constexpr int64_t kVocab = 151936;
  std::vector<float> logits(kVocab, -20.0f);
  logits[100] = 10.0f;
  logits[70000] = 9.0f;
  logits[151935] = 9.5f;
  SamplingParams p = Sampled(1.0f, 5);
  p.top_p = 0.9f;
  Sampler sampler(p, {}, kVocab);
  int32_t token = -1;
  EXPECT_EQ(Kept(Processed(sampler, logits, &token)), (std::set<int32_t>{100, 70000, 151935}));
  EXPECT_TRUE(token == 100 || token == 70000 || token == 151935);
}

TEST(SamplingTest, TopPMatchesFullSortOnFlatDistributions) {
  // Flat distributions keep thousands of tokens, past the partial sort of the top 256, so the
  // quickselect path decides; compare with a full sort and a running sum.
  std::mt19937 rng(3);
  for (int64_t vocab : {300, 5000, 151936}) {
    std::uniform_real_distribution<float> uniform(0.0f, 2.0f);
    std::vector<float> logits(vocab);
    for (float& x : logits) x = uniform(rng);
    logits[vocab / 3] = -kInf;  // never kept
    for (float top_p : {0.05f, 0.5f, 0.9f, 0.999f}) {
      std::vector<int32_t> order;
      double total = 0.0;
      double max_value = *std::max_element(logits.begin(), logits.end());
      for (int64_t i = 0; i < vocab; ++i) {
        if (logits[i] == -kInf) continue;
        order.push_back(static_cast<int32_t>(i));
        total += std::exp(static_cast<double>(logits[i]) - max_value);
      }
      std::sort(order.begin(), order.end(), [&logits](int32_t a, int32_t b) {
        return logits[a] > logits[b] || (logits[a] == logits[b] && a < b);
      });
      std::set<int32_t> expected;
      double cumulative = 0.0;
      for (int32_t id : order) {
        expected.insert(id);
        cumulative += std::exp(static_cast<double>(logits[id]) - max_value);
        if (cumulative >= (static_cast<double>(top_p) - 1e-6) * total) break;
      }
      SamplingParams p = Sampled(1.0f, 8);
      p.top_p = top_p;
      Sampler sampler(p, {}, vocab);
      int32_t token = -1;
      EXPECT_EQ(Kept(Processed(sampler, logits, &token)), expected)
          << "vocab " << vocab << " top_p " << top_p;
      EXPECT_EQ(expected.count(token), 1u);
    }
  }
}

// ---- seeded draws ----

TEST(SamplingTest, SameSeedSameTokensDifferentSeedsDiffer) {
  const std::vector<float> logits = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
  const auto draws = [&logits](uint64_t seed) {
    Sampler sampler(Sampled(1.0f, seed), {}, 8);
    std::vector<int32_t> tokens;
    for (int i = 0; i < 200; ++i) {
      std::vector<float> row = logits;
      tokens.push_back(sampler.Next(row));
    }
    return tokens;
  };
  EXPECT_EQ(draws(42), draws(42));
  EXPECT_NE(draws(42), draws(43));
  EXPECT_NE(draws(0), draws(1));
}

TEST(SamplingTest, DrawFollowsTheDocumentedAlgorithm) {
  // u = (mt19937_64() >> 11) * 2^-53; the first id (ascending) whose cumulative weight
  // exceeds u * total.
  const std::vector<double> probs = {0.1, 0.2, 0.3, 0.4};
  const std::vector<float> logits = Log(probs);
  constexpr uint64_t kSeed = 12345;
  Sampler sampler(Sampled(1.0f, kSeed), {}, 4);
  std::mt19937_64 reference(kSeed);
  for (int i = 0; i < 1000; ++i) {
    std::vector<double> weights;
    double total = 0.0;
    for (float x : logits) {
      weights.push_back(std::exp(static_cast<double>(x) - logits[3]));
      total += weights.back();
    }
    const double u = static_cast<double>(reference() >> 11) * 0x1.0p-53;
    int32_t expected = 3;
    double cumulative = 0.0;
    for (int32_t id = 0; id < 4; ++id) {
      cumulative += weights[id];
      if (cumulative > u * total) {
        expected = id;
        break;
      }
    }
    std::vector<float> row = logits;
    ASSERT_EQ(sampler.Next(row), expected) << "draw " << i;
  }
}

TEST(SamplingTest, FrequenciesMatchProbabilities) {
  const std::vector<double> probs = {0.1, 0.2, 0.3, 0.4};
  const std::vector<float> logits = Log(probs);
  constexpr int kDraws = 20000;
  for (uint64_t seed : {1u, 2u, 3u}) {
    Sampler sampler(Sampled(1.0f, seed), {}, 4);
    std::vector<int> counts(4, 0);
    for (int i = 0; i < kDraws; ++i) {
      std::vector<float> row = logits;
      ++counts[sampler.Next(row)];
    }
    for (int id = 0; id < 4; ++id) {
      const double mean = kDraws * probs[id];
      const double sigma = std::sqrt(kDraws * probs[id] * (1.0 - probs[id]));
      EXPECT_LE(std::abs(counts[id] - mean), 4.0 * sigma)
          << "seed " << seed << " id " << id << " count " << counts[id];
    }
  }
}

TEST(SamplingTest, TemperatureSharpensDistribution) {
  // Probabilities {0.1, 0.2, 0.3, 0.4} at temperature 0.5 become proportional to p^2:
  // {1, 4, 9, 16} / 30.
  const std::vector<float> logits = Log({0.1, 0.2, 0.3, 0.4});
  const std::vector<double> sharpened = {1.0 / 30, 4.0 / 30, 9.0 / 30, 16.0 / 30};
  constexpr int kDraws = 20000;
  Sampler sampler(Sampled(0.5f, 77), {}, 4);
  std::vector<int> counts(4, 0);
  for (int i = 0; i < kDraws; ++i) {
    std::vector<float> row = logits;
    ++counts[sampler.Next(row)];
  }
  for (int id = 0; id < 4; ++id) {
    const double sigma = std::sqrt(kDraws * sharpened[id] * (1.0 - sharpened[id]));
    EXPECT_LE(std::abs(counts[id] - kDraws * sharpened[id]), 4.0 * sigma) << id;
  }
}

TEST(SamplingTest, UnseededSamplerWorks) {
  SamplingParams p;
  p.temperature = 1.0f;
  Sampler sampler(p, {}, 4);
  std::vector<float> logits = {0.0f, 0.0f, -kInf, 0.0f};
  const int32_t token = sampler.Next(logits);
  EXPECT_TRUE(token == 0 || token == 1 || token == 3);
}

// ---- Validate and presets ----

TEST(SamplingTest, ValidateAcceptsDefaultsAndOffValues) {
  EXPECT_TRUE(SamplingParams{}.Validate().has_value());
  SamplingParams p;
  p.top_k = -1;
  EXPECT_TRUE(p.Validate().has_value());
  p.top_k = 0;
  p.top_p = 1.0f;
  p.presence_penalty = -2.0f;
  p.frequency_penalty = 2.0f;
  p.repetition_penalty = 0.01f;
  p.temperature = 30.0f;
  p.logit_bias = {{0, -100.0f}, {7, 100.0f}};
  EXPECT_TRUE(p.Validate().has_value());
}

TEST(SamplingTest, ValidateRejectsEachBadField) {
  struct Case {
    std::string field;
    void (*set)(SamplingParams&);
  };
  const std::vector<Case> cases = {
      {"temperature", [](SamplingParams& p) { p.temperature = -1.0f; }},
      {"temperature", [](SamplingParams& p) { p.temperature = kNaN; }},
      {"temperature", [](SamplingParams& p) { p.temperature = kInf; }},
      {"top_p", [](SamplingParams& p) { p.top_p = 0.0f; }},
      {"top_p", [](SamplingParams& p) { p.top_p = 1.5f; }},
      {"top_p", [](SamplingParams& p) { p.top_p = kNaN; }},
      {"top_k", [](SamplingParams& p) { p.top_k = -2; }},
      {"presence_penalty", [](SamplingParams& p) { p.presence_penalty = 3.0f; }},
      {"presence_penalty", [](SamplingParams& p) { p.presence_penalty = -kInf; }},
      {"frequency_penalty", [](SamplingParams& p) { p.frequency_penalty = 3.0f; }},
      {"frequency_penalty", [](SamplingParams& p) { p.frequency_penalty = kNaN; }},
      {"repetition_penalty", [](SamplingParams& p) { p.repetition_penalty = 0.0f; }},
      {"repetition_penalty", [](SamplingParams& p) { p.repetition_penalty = -1.0f; }},
      {"repetition_penalty", [](SamplingParams& p) { p.repetition_penalty = kNaN; }},
      {"no_repeat_ngram_size", [](SamplingParams& p) { p.no_repeat_ngram_size = -1; }},
      {"logit_bias",
       [](SamplingParams& p) {
         p.logit_bias = {{-1, 1.0f}};
       }},
      {"logit_bias",
       [](SamplingParams& p) {
         p.logit_bias = {{5, 100.5f}};
       }},
      {"logit_bias",
       [](SamplingParams& p) {
         p.logit_bias = {{5, kNaN}};
       }},
      {"logit_bias",
       [](SamplingParams& p) {
         p.logit_bias = {{5, 1.0f}, {2, 0.0f}, {5, 2.0f}};
       }},
  };
  for (const Case& c : cases) {
    SamplingParams p;
    c.set(p);
    const Status status = p.Validate();
    ASSERT_FALSE(status.has_value()) << c.field;
    EXPECT_EQ(status.error().code, ErrorCode::kInvalidArgument);
    EXPECT_NE(status.error().message.find(c.field), std::string::npos) << status.error().message;
  }
}

}  // namespace
}  // namespace mineru::engine
