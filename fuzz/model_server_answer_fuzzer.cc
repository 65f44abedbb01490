// SPDX-License-Identifier: Apache-2.0
// What a model server sends back to `--model-server` (pipeline/chat_answer.h,
// pipeline/retry_policy.h) and the URL an operator gives it (pipeline/model_server.h), all
// three read from the same input. Invariants: an accepted answer's content is no longer than
// the body and its token counts are non-negative; a Retry-After wait is positive and within
// its cap; a normalized URL is http(s), has no trailing "/" and normalizes to itself.
#include <chrono>
#include <cstddef>
#include <cstdint>

#include "fuzz/fuzz_util.h"
#include "pipeline/chat_answer.h"
#include "pipeline/model_server.h"
#include "pipeline/retry_policy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace mineru;
  const std::string_view text = fuzz::AsText(data, size);

  if (auto answer = pipeline::ReadChatAnswer(text)) {
    MINERU_CHECK(answer->content.size() <= text.size());
    MINERU_CHECK(answer->prompt_tokens.value_or(0) >= 0);
    MINERU_CHECK(answer->completion_tokens.value_or(0) >= 0);
  }

  constexpr std::chrono::milliseconds kCap{120'000};
  const auto now = std::chrono::system_clock::time_point(std::chrono::seconds(1'800'000'000));
  if (auto wait = pipeline::ParseRetryAfter(text, now, kCap)) {
    MINERU_CHECK(wait->count() > 0 && *wait <= kCap, "wait {} ms", wait->count());
  }

  if (auto url = pipeline::NormalizeModelServerUrl(text)) {
    MINERU_CHECK(url->starts_with("http://") || url->starts_with("https://"), "{}", *url);
    MINERU_CHECK(!url->ends_with("/"), "{}", *url);
    auto again = pipeline::NormalizeModelServerUrl(*url);
    // "/v1/v1" loses one "/v1" a pass; a URL without it is a fixed point.
    if (!url->ends_with("/v1")) {
      MINERU_CHECK(again.has_value() && *again == *url, "{} -> {}", *url,
                   again ? *again : again.error().message);
    }
  }
  return 0;
}
