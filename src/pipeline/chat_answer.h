// SPDX-License-Identifier: Apache-2.0
// What MinerU's http client accepts of an OpenAI-compatible chat completion answer, and what it
// takes from it (mineru-vl-utils 1.2.1 vlm_client/http_client.py, get_response_content): the
// rule a model server must satisfy for MinerU's pipeline, and the one a pipeline reading such a
// server applies.
//
//   * the body is a JSON object; `"object": "error"` is a server error;
//   * `choices` is a non-empty array (else a server error: "No choices found in the response.");
//   * `choices[0].finish_reason` is "stop" or "length" ("length": truncated, accepted); anything
//     else, null included, is a request error;
//   * `choices[0].message` is an object holding the key `content`, a string or null (null reads
//     as ""); without it, a server error;
//   * one trailing end token (MINERU_VLM_END_TOKEN, default "<|im_end|>"; empty: none) is cut.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace mineru::pipeline {

inline constexpr std::string_view kDefaultVlmEndToken = "<|im_end|>";

struct ChatAnswer {
  std::string content;
  bool truncated = false;  // finish_reason "length"
  // The answer's usage.prompt_tokens and usage.completion_tokens when it has them as
  // non-negative integers (the client ignores usage; a pipeline counts tokens with it).
  std::optional<int64_t> prompt_tokens;
  std::optional<int64_t> completion_tokens;
};

// Errors: kUnavailable for what the client calls a server error (an error object, no choices,
// no content, a body that is not a JSON object), kInvalidArgument for a request error (a finish
// reason other than stop and length); the message says which rule failed.
Result<ChatAnswer> ReadChatAnswer(std::string_view body,
                                  std::string_view end_token = kDefaultVlmEndToken);

}  // namespace mineru::pipeline
