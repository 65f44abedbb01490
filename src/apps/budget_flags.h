// SPDX-License-Identifier: Apache-2.0
// Command-line flags for what one request may cost: the image budgets (serve and worker: chat
// requests and image documents) and the chat parameter limits (serve). docs/LIMITS.md lists each
// with its default, the answer past it and the measurement behind the default.
#pragma once

#include <CLI/CLI.hpp>
#include <cstddef>
#include <cstdint>
#include <cstdio>

#include "base/byte_budget.h"
#include "image/image_budget.h"
#include "service/chat_limits.h"

namespace mineru::apps {

struct ImageBudgetFlags {
  uint64_t max_request_decoded_bytes = image::kDefaultMaxRequestDecodedBytes;
  uint64_t max_image_bytes_in_flight = image::kDefaultMaxImageBytesInFlight;

  void Register(CLI::App& cmd) {
    cmd.add_option("--max-request-decoded-bytes", max_request_decoded_bytes,
                   "Bytes (width x height x 3) all images of one chat request, or one image "
                   "document, may decode to; more is refused from the headers (413/400)")
        ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 40))
        ->capture_default_str();
    cmd.add_option("--max-image-bytes-in-flight", max_image_bytes_in_flight,
                   "Memory held for images being read, process-wide (files, pixels, decoding "
                   "scratch); when full, chat requests get 503 and documents wait")
        ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 44))
        ->capture_default_str();
  }

  // False (with a message) when no request within its own limit could ever fit in flight.
  bool Check() const {
    if (max_image_bytes_in_flight >= max_request_decoded_bytes) return true;
    std::fprintf(stderr,
                 "mineru-cpp: error: --max-image-bytes-in-flight (%llu) must be at least "
                 "--max-request-decoded-bytes (%llu)\n",
                 static_cast<unsigned long long>(max_image_bytes_in_flight),
                 static_cast<unsigned long long>(max_request_decoded_bytes));
    return false;
  }

  // `in_flight` must have capacity max_image_bytes_in_flight and outlive every user.
  void Apply(image::ImageBudget& budget, ByteBudget* in_flight) const {
    budget.max_request_decoded_bytes = max_request_decoded_bytes;
    budget.in_flight = in_flight;
  }
};

struct ChatLimitFlags {
  int32_t max_no_repeat_ngram_size = service::kDefaultMaxNoRepeatNgramSize;
  size_t max_stop_strings = service::kDefaultMaxStopStrings;
  size_t max_stop_bytes = service::kDefaultMaxStopBytes;
  size_t max_logit_bias = service::kDefaultMaxLogitBias;

  void Register(CLI::App& cmd) {
    cmd.add_option("--max-no-repeat-ngram-size", max_no_repeat_ngram_size,
                   "Largest vllm_xargs.no_repeat_ngram_size a chat request may ask for")
        ->check(CLI::Range(int32_t{1}, INT32_MAX))
        ->capture_default_str();
    cmd.add_option("--max-stop-strings", max_stop_strings, "Stop strings one chat request may give")
        ->check(CLI::Range(size_t{0}, size_t{4096}))
        ->capture_default_str();
    cmd.add_option("--max-stop-bytes", max_stop_bytes, "Bytes of each stop string at most")
        ->check(CLI::Range(size_t{1}, size_t{1} << 20))
        ->capture_default_str();
    cmd.add_option("--max-logit-bias", max_logit_bias,
                   "Entries of one chat request's logit_bias at most")
        ->check(CLI::Range(size_t{0}, size_t{1} << 20))
        ->capture_default_str();
  }

  void Apply(service::ChatLimits& limits) const {
    limits.max_no_repeat_ngram_size = max_no_repeat_ngram_size;
    limits.max_stop_strings = max_stop_strings;
    limits.max_stop_bytes = max_stop_bytes;
    limits.max_logit_bias = max_logit_bias;
  }
};

}  // namespace mineru::apps
