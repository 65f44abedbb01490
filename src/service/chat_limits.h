// SPDX-License-Identifier: Apache-2.0
// What one chat completion request may ask for: every request field whose cost grows with its
// value has a limit here, checked while the request is read (service/chat_request.h), before
// anything expensive happens. Over a limit: 400 naming the field and the limit (images over
// their decoded-bytes budget: 413). docs/LIMITS.md gives each limit's flag on `serve` and the
// measurements behind its default.
#pragma once

#include <cstddef>
#include <cstdint>

#include "engine/options.h"
#include "image/image_budget.h"

namespace mineru::service {

// The sampler's set-up is O(log n) and each step looks at one (n-1)-token window, so any size
// is cheap (measured: 2^31 - 1 costs 31 us to set up and nothing a step; the worst size, around
// 4096, under 1 us a step); an n-gram longer than Qwen2-VL's 32,768-token context can never
// complete, so a larger size means nothing and is refused as a mistake.
inline constexpr int32_t kDefaultMaxNoRepeatNgramSize = 32768;
// Stop strings are searched in the text after every token, in O(count x length^2) at worst
// (measured with 16 strings of 256 bytes on text built to defeat the search: 46 us a token,
// 1.5 s of a handler thread over a 32,768-token answer; 0.4 us a token on ordinary text).
// OpenAI allows 4 strings.
inline constexpr size_t kDefaultMaxStopStrings = 16;
inline constexpr size_t kDefaultMaxStopBytes = 256;
// One addition a pair per step, and a sort of the pairs once per request.
inline constexpr size_t kDefaultMaxLogitBias = 1024;

struct ChatLimits {
  // Image parts of one request, counted before any is fetched or decoded; serve sets it from
  // --max-images-per-request, which the engine checks as well.
  int64_t max_images = engine::kDefaultMaxImagesPerRequest;
  int32_t max_no_repeat_ngram_size = kDefaultMaxNoRepeatNgramSize;  // vllm_xargs
  size_t max_stop_strings = kDefaultMaxStopStrings;                 // entries of "stop"
  size_t max_stop_bytes = kDefaultMaxStopBytes;                     // each, in UTF-8 bytes
  size_t max_logit_bias = kDefaultMaxLogitBias;                     // entries of "logit_bias"
  // Decoded bytes per request and the process-wide budget of images in flight.
  image::ImageBudget images;
};

}  // namespace mineru::service
