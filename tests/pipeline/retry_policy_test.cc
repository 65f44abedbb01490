// SPDX-License-Identifier: Apache-2.0
// MinerU's HTTP client's retry rule (httpx-retries Retry(total=3, backoff_factor=0.5)): which
// statuses are tried again, how a Retry-After header reads (delta-seconds and the three HTTP
// date forms of RFC 9110), and the full-jitter backoff's bounds.
#include "pipeline/retry_policy.h"

#include <gtest/gtest.h>

#include <climits>
#include <cstdint>
#include <limits>

namespace mineru::pipeline {
namespace {

using std::chrono::milliseconds;
using std::chrono::system_clock;
using namespace std::chrono_literals;

constexpr milliseconds kCap = RetryPolicy::kDefaultMaxRetryAfter;  // 120 s

// An instant by the proleptic Gregorian calendar, independent of the parser's timegm.
system_clock::time_point Utc(int year, unsigned month, unsigned day, int hour, int minute,
                             int second) {
  const std::chrono::sys_days date{std::chrono::year{year} / std::chrono::month{month} /
                                   std::chrono::day{day}};
  return date + std::chrono::hours(hour) + std::chrono::minutes(minute) +
         std::chrono::seconds(second);
}

const system_clock::time_point kNow = Utc(2026, 10, 21, 7, 28, 0);  // Wed, 21 Oct 2026

TEST(RetryPolicyTest, RetryableStatuses) {
  for (long status : {429, 500, 502, 503, 504}) {
    EXPECT_TRUE(IsRetryableStatus(status)) << status;
  }
  for (long status :
       {0, -1, 200, 204, 301, 400, 401, 403, 404, 408, 409, 413, 422, 499, 501, 505, 507, 599}) {
    EXPECT_FALSE(IsRetryableStatus(status)) << status;
  }
}

TEST(RetryPolicyTest, RetryAfterDeltaSeconds) {
  EXPECT_EQ(ParseRetryAfter("120", kNow, kCap), milliseconds(120'000));
  EXPECT_EQ(ParseRetryAfter("7", kNow, kCap), milliseconds(7'000));
  EXPECT_EQ(ParseRetryAfter(" 3\t", kNow, kCap), milliseconds(3'000));  // optional whitespace
  EXPECT_EQ(ParseRetryAfter("007", kNow, kCap), milliseconds(7'000));
  // Zero is not a positive wait: the backoff applies.
  EXPECT_EQ(ParseRetryAfter("0", kNow, kCap), std::nullopt);
  EXPECT_EQ(ParseRetryAfter("000", kNow, kCap), std::nullopt);
  // Malformed.
  for (std::string_view bad : {"", "  ", "-1", "+5", "abc", "1.5", "1e3", "12 s", "0x10", "５"}) {
    EXPECT_EQ(ParseRetryAfter(bad, kNow, kCap), std::nullopt) << bad;
  }
}

TEST(RetryPolicyTest, RetryAfterIsCapped) {
  EXPECT_EQ(ParseRetryAfter("121", kNow, kCap), kCap);
  EXPECT_EQ(ParseRetryAfter("99999999999999999999999999999999999999", kNow, kCap), kCap);
  EXPECT_EQ(ParseRetryAfter("9223372036854775808", kNow, kCap), kCap);  // 2^63
  EXPECT_EQ(ParseRetryAfter("5", kNow, 2'500ms), milliseconds(2'500));
  EXPECT_EQ(ParseRetryAfter("2", kNow, 2'500ms), milliseconds(2'000));
  // A cap of zero leaves nothing to wait; the largest cap cannot overflow the arithmetic.
  EXPECT_EQ(ParseRetryAfter("5", kNow, 0ms), std::nullopt);
  EXPECT_EQ(ParseRetryAfter("99999999999999999999", kNow, milliseconds::max()),
            milliseconds::max());
  // (In seconds: year 9999 is past what system_clock's nanoseconds hold.)
  const std::chrono::sys_seconds end_of_9999 =
      std::chrono::sys_days{std::chrono::year{9999} / 12 / 31} + 86'399s;
  EXPECT_EQ(ParseRetryAfter("Fri, 31 Dec 9999 23:59:59 GMT", kNow, milliseconds::max()),
            milliseconds(end_of_9999 - std::chrono::floor<std::chrono::seconds>(kNow)));
}

TEST(RetryPolicyTest, RetryAfterImfFixdate) {
  EXPECT_EQ(ParseRetryAfter("Wed, 21 Oct 2026 07:28:30 GMT", kNow, kCap), milliseconds(30'000));
  // `now` between seconds: the wait is to the date, to the millisecond.
  EXPECT_EQ(ParseRetryAfter("Wed, 21 Oct 2026 07:28:30 GMT", kNow + 250ms, kCap),
            milliseconds(29'750));
  EXPECT_EQ(ParseRetryAfter("Wed, 21 Oct 2026 07:29:00 GMT", kNow + 59'999ms, kCap),
            milliseconds(1));
  // Across a day, a month and a leap day.
  EXPECT_EQ(ParseRetryAfter("Tue, 29 Feb 2028 00:00:10 GMT", Utc(2028, 2, 28, 23, 59, 50), kCap),
            milliseconds(20'000));
  EXPECT_EQ(ParseRetryAfter("Mon, 01 Mar 2027 00:00:01 GMT", Utc(2027, 2, 28, 23, 59, 59), kCap),
            milliseconds(2'000));
  // Later than the cap, far later (past what system_clock's nanoseconds hold), now, the past.
  EXPECT_EQ(ParseRetryAfter("Wed, 21 Oct 2026 08:00:00 GMT", kNow, kCap), kCap);
  EXPECT_EQ(ParseRetryAfter("Fri, 31 Dec 9999 23:59:59 GMT", kNow, kCap), kCap);
  EXPECT_EQ(ParseRetryAfter("Wed, 21 Oct 2026 07:28:00 GMT", kNow, kCap), std::nullopt);
  EXPECT_EQ(ParseRetryAfter("Wed, 21 Oct 2026 07:27:59 GMT", kNow, kCap), std::nullopt);
  EXPECT_EQ(ParseRetryAfter("Sun, 06 Nov 1994 08:49:37 GMT", kNow, kCap), std::nullopt);
}

TEST(RetryPolicyTest, RetryAfterMalformedDates) {
  for (std::string_view bad : {
           "Mon, 29 Feb 2027 00:00:00 GMT",    // 2027 is not a leap year
           "Wed, 31 Sep 2026 07:28:30 GMT",    // September has 30 days
           "Wed, 00 Oct 2026 07:28:30 GMT",    // day 0
           "Wed, 21 Oct 2026 24:00:00 GMT",    // hour 24
           "Wed, 21 Oct 2026 07:60:00 GMT",    // minute 60
           "Wed, 21 Oct 2026 07:28:61 GMT",    // second 61
           "wed, 21 oct 2026 07:28:30 GMT",    // names are case-sensitive
           "Wed, 21 Oct 2026 07:28:30 UTC",    // only GMT
           "Wed, 21 Oct 2026 07:28:30 +0000",  //
           "Wed, 21 Oct 2026 07:28:30",        // no zone
           "Wed, 21 Oct 2026 7:28:30 GMT",     // fixed widths
           "Wed, 1 Oct 2026 07:28:30 GMT",     //
           "Wed 21 Oct 2026 07:28:30 GMT",     // no comma
           "Xyz, 21 Oct 2026 07:28:30 GMT",    // no such day
           "Wed, 21 Okt 2026 07:28:30 GMT",    // no such month
           "Wed, 21 Oct 2026 07:28:30 GMTX",   // trailing text
           "2026-10-21T07:28:30Z",             // ISO 8601 is not an HTTP date
       }) {
    EXPECT_EQ(ParseRetryAfter(bad, kNow, kCap), std::nullopt) << bad;
  }
}

TEST(RetryPolicyTest, RetryAfterObsoleteDateForms) {
  // RFC 850 and asctime, which recipients must still accept.
  EXPECT_EQ(ParseRetryAfter("Wednesday, 21-Oct-26 07:28:30 GMT", kNow, kCap), milliseconds(30'000));
  EXPECT_EQ(ParseRetryAfter("Wed Oct 21 07:28:30 2026", kNow, kCap), milliseconds(30'000));
  EXPECT_EQ(ParseRetryAfter("Sun Nov  1 00:00:05 2026", Utc(2026, 11, 1, 0, 0, 0), kCap),
            milliseconds(5'000));  // a one-digit day is padded with a space
  EXPECT_EQ(ParseRetryAfter("Sun Nov 01 00:00:05 2026", Utc(2026, 11, 1, 0, 0, 0), kCap),
            milliseconds(5'000));
  // RFC 850's two-digit year: at most 50 years ahead of now, else the century before.
  EXPECT_EQ(ParseRetryAfter("Wednesday, 21-Oct-76 07:28:30 GMT", kNow, kCap), kCap);       // 2076
  EXPECT_EQ(ParseRetryAfter("Friday, 21-Oct-77 07:28:30 GMT", kNow, kCap), std::nullopt);  // 1977
  EXPECT_EQ(ParseRetryAfter("Wed Oct 21 07:28:30 2026 GMT", kNow, kCap), std::nullopt);
}

// Draws of one retry's delay: all inside [0, bound), and spread over it (the rng is seeded, so
// the draws are the same every run).
void ExpectFullJitter(int retry, milliseconds base, milliseconds bound) {
  std::mt19937_64 rng(20261021 + retry);
  constexpr int kDraws = 10'000;
  milliseconds low = milliseconds::max();
  milliseconds high = milliseconds::min();
  double sum = 0;
  for (int i = 0; i < kDraws; ++i) {
    const milliseconds delay = BackoffDelay(retry, base, rng);
    ASSERT_GE(delay, 0ms) << "retry " << retry;
    ASSERT_LT(delay, bound) << "retry " << retry;
    low = std::min(low, delay);
    high = std::max(high, delay);
    sum += static_cast<double>(delay.count());
  }
  EXPECT_LT(low, bound / 100) << "retry " << retry;
  EXPECT_GT(high, bound * 99 / 100) << "retry " << retry;
  const double mean = sum / kDraws;
  const double half = static_cast<double>(bound.count()) / 2;
  EXPECT_NEAR(mean, half, half * 0.05) << "retry " << retry;
}

TEST(RetryPolicyTest, BackoffIsFullJitterOverADoublingBound) {
  const milliseconds base = RetryPolicy::kDefaultBackoffBase;  // 0.5 s
  ExpectFullJitter(1, base, 1'000ms);
  ExpectFullJitter(2, base, 2'000ms);
  ExpectFullJitter(3, base, 4'000ms);
  ExpectFullJitter(1, 100ms, 200ms);
}

TEST(RetryPolicyTest, BackoffOfAHugeRetryDoesNotOverflow) {
  for (int retry : {62, 63, 64, 1000, INT_MAX}) {
    std::mt19937_64 rng(7);
    bool reached_far = false;
    for (int i = 0; i < 200; ++i) {
      const milliseconds delay = BackoffDelay(retry, 500ms, rng);
      ASSERT_GE(delay, 0ms) << "retry " << retry;
      // The bound stopped doubling near int64's end rather than wrapping to a small number.
      reached_far = reached_far || delay.count() > (int64_t{1} << 61);
    }
    EXPECT_TRUE(reached_far) << "retry " << retry;
  }
  std::mt19937_64 rng(1);
  EXPECT_GE(BackoffDelay(INT_MAX, milliseconds(std::numeric_limits<int64_t>::max()), rng), 0ms);
}

TEST(RetryPolicyTest, BackoffEdges) {
  std::mt19937_64 rng(3);
  for (int i = 0; i < 100; ++i) {
    EXPECT_LT(BackoffDelay(0, 500ms, rng), 500ms);   // 2^0
    EXPECT_LT(BackoffDelay(-5, 500ms, rng), 500ms);  // a negative retry doubles nothing
    EXPECT_EQ(BackoffDelay(2, 0ms, rng), 0ms);
    EXPECT_EQ(BackoffDelay(2, -10ms, rng), 0ms);
    EXPECT_LT(BackoffDelay(3, 1ms, rng), 8ms);
  }
}

}  // namespace
}  // namespace mineru::pipeline
