// SPDX-License-Identifier: Apache-2.0
// When a request to a model server is tried again, and after how long: the rule of MinerU's HTTP
// client (mineru-vl-utils 1.2.1 vlm_client/http_client.py, httpx-retries
// Retry(total=3, backoff_factor=0.5)), which a remote generator follows so that a site sees
// nearly the same traffic from us as from MinerU; the one difference is 500, which
// httpx-retries' defaults do not retry and we do (a model server's 500 is most often a worker
// that died under load, which a replica behind the same URL answers):
//
//   * retried: transport failures (no connection, reset, timeout, a body cut short) and the
//     statuses 429, 500, 502, 503 and 504; never another status, never an answer that arrived
//     whole (a malformed one included: the server would answer it the same way again);
//   * before retry k (k = 1, 2, ...): the server's Retry-After when it sent a positive one
//     (delta-seconds or an HTTP date; capped at max_retry_after), else a uniform random wait in
//     [0, backoff_base * 2^k) ("full jitter", so that a crowd of clients does not retry in step);
//   * never past the request's deadline: a retry that could not start before it is not made.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <random>
#include <string_view>

namespace mineru::pipeline {

struct RetryPolicy {
  static constexpr int kDefaultMaxRetries = 3;
  static constexpr std::chrono::milliseconds kDefaultBackoffBase{500};
  static constexpr std::chrono::milliseconds kDefaultMaxRetryAfter{120'000};

  int max_retries = kDefaultMaxRetries;  // attempts = 1 + max_retries
  std::chrono::milliseconds backoff_base = kDefaultBackoffBase;
  std::chrono::milliseconds max_retry_after = kDefaultMaxRetryAfter;
};

// 429, 500, 502, 503, 504.
bool IsRetryableStatus(long status);

// A Retry-After header value as a wait from `now`: delta-seconds ("120") or an IMF-fixdate
// ("Wed, 21 Oct 2026 07:28:00 GMT"); nullopt when absent, malformed, zero or in the past (the
// backoff applies then). Never more than `cap`.
std::optional<std::chrono::milliseconds> ParseRetryAfter(std::string_view value,
                                                         std::chrono::system_clock::time_point now,
                                                         std::chrono::milliseconds cap);

// The wait before retry `retry` (1-based) without a Retry-After: uniform in
// [0, backoff_base * 2^retry), the exponent capped so the bound cannot overflow.
std::chrono::milliseconds BackoffDelay(int retry, std::chrono::milliseconds backoff_base,
                                       std::mt19937_64& rng);

}  // namespace mineru::pipeline
