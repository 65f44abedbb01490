// SPDX-License-Identifier: Apache-2.0
// A generation request as the body MinerU's HTTP client posts to an OpenAI-compatible
// /v1/chat/completions (mineru-vl-utils 1.2.1 vlm_client/http_client.py build_request_body;
// docs/SCALE_OUT.md "The request"), keys in the client's order:
//
//   {"model": ID,
//    "messages": [{"role": "system", "content": "You are a helpful assistant."},
//                 {"role": "user", "content": [{"type": "image_url",
//                                               "image_url": {"url": "data:image/png;base64,..."}},
//                                              {"type": "text", "text": "\nTable Recognition:"}]}],
//    ["priority": P,] "temperature": 0.0, "top_p": 0.01, "top_k": 1, "presence_penalty": 1.0,
//    "frequency_penalty": 0.005, "repetition_penalty": 1.0,
//    "vllm_xargs": {"no_repeat_ngram_size": 100, "debug": false},
//    ["max_completion_tokens": N, "max_tokens": N,] "skip_special_tokens": false}
//
// Rules:
//   * every image is PNG-encoded (lossless, so the server decodes the very pixels the pipeline
//     cut) and sent as a data URL where its part stands in the message;
//   * a request without a system turn gets the client's ("You are a helpful assistant.", also
//     the Qwen2-VL chat template's default, so an engine given the bare user turn renders the
//     same prompt);
//   * `priority` only when non-zero (vLLM refuses any other priority unless started with
//     --scheduling-policy priority, and 0 is its default), as the client sends it only when set;
//   * both token-limit keys when the request has a limit, neither otherwise (the server's default
//     is the remaining context);
//   * `vllm_xargs` when no_repeat_ngram_size is set; `seed` and `logit_bias` when set (MinerU
//     sets neither);
//   * for model ids starting with "gpt" (any case), no `top_k`, `repetition_penalty` or
//     `skip_special_tokens` (OpenAI refuses them), as the client does;
//   * sampling floats are written as their shortest decimal form (0.005, not
//     0.004999999888241291), the number the client's Python literal is.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"
#include "engine/request.h"

namespace mineru::pipeline {

inline constexpr std::string_view kClientSystemPrompt = "You are a helpful assistant.";

struct ChatBodyOptions {
  // zlib level of the PNG crops: 1 costs a fraction of 6 (Pillow's default) in encode time
  // for a slightly larger body; the pixels are the same either way.
  int png_compression_level = 1;
};

// Errors: kInvalidArgument for a request the body cannot express (ready prompt ids instead of
// messages, an image part without decoded pixels, more image parts than images or fewer),
// and what PNG encoding reports.
Result<std::string> BuildChatRequestBody(const engine::Request& request, std::string_view model,
                                         const ChatBodyOptions& options = {});

}  // namespace mineru::pipeline
