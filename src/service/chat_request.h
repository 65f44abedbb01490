// SPDX-License-Identifier: Apache-2.0
// A POST /v1/chat/completions body as an engine request: what OpenAI clients and MinerU's
// vlm-http-client (mineru-vl-utils 0.1.22 and 1.2.1 vlm_client/http_client.py) send.
//
// Rules:
// * "messages": roles system, user, assistant; "content" a string, null or an array of "text"
//   and "image_url" parts in any order and number (zero images: a text-only request, as the
//   client's cross-page table merge sends). The parts become ChatParts in the same order, so the
//   chat template renders each image as <|vision_start|><|image_pad|><|vision_end|> with the
//   text parts verbatim between them; the images go to Request::images in order of appearance.
// * Token limit: "max_tokens" and "max_completion_tokens" (the current client sends both, equal);
//   when both are present the smaller one applies; each must be at least 1. Neither: unset, so
//   the engine generates until a stop token or the end of the context. A limit larger than what
//   the context leaves after the prompt is clamped by the engine (the answer then ends with
//   finish_reason "length"), never refused.
// * "skip_special_tokens" defaults to false: special tokens such as <|box_start|> stay in the
//   text unless a request asks to drop them. (OpenAI's and vLLM's default is true; MinerU's
//   client sends false, except for model ids starting with "gpt", where it sends nothing and
//   still needs the layout tokens.)
// * "priority": an integer, lower runs first (vLLM's convention). "vllm_xargs":
//   "no_repeat_ngram_size" is applied; every other key (e.g. "debug") is ignored.
// * Sampling fields absent from a request keep OpenAI's defaults (temperature 1, top_p 1),
//   vLLM's for its extensions (top_k off, repetition_penalty 1). "logit_bias" maps decimal
//   token ids to biases, clamped to [-100, 100] as vLLM clamps them.
// * Limits (service/chat_limits.h, OpenAiOptions::limits), each checked before the work it
//   bounds and refused with 400 naming the field and the limit: vllm_xargs.no_repeat_ngram_size,
//   the number of "stop" strings and the bytes of each, the entries of "logit_bias", the number
//   of image parts. "n" must be 1. "max_tokens" needs none (the engine clamps it to the context;
//   nothing is sized by it), nor "top_k" (any value costs one O(vocabulary) selection).
// * Images (service/chat_images.h): counted, read and their headers probed before any is
//   decoded; over the request's decoded-bytes budget: 413; the process budget of images in
//   flight full: 503 with Retry-After.
#pragma once

#include <string>
#include <vector>

#include "base/json.h"
#include "base/status.h"
#include "engine/request.h"
#include "service/openai_api.h"

namespace mineru::service {

struct ChatRequest {
  engine::Request request;
  std::vector<std::string> stop;  // stop strings, none empty
  bool skip_special = false;      // skip_special_tokens
  bool stream = false;
  bool include_usage = false;
};

// Errors: kNotFound for a "model" other than options.model_id (404); kResourceExhausted for
// images over the request's budget (413); kUnavailable for a full process budget of images in
// flight (503); kInvalidArgument for everything else the client got wrong (400), naming the
// field.
Result<ChatRequest> ParseChatRequest(const Json& body, const OpenAiOptions& options);

// The HTTP answer to an error of ParseChatRequest, as listed there, in the OpenAI error shape
// (service/api_error.h); 503 carries Retry-After.
HttpResponse ChatRequestErrorResponse(const Error& error);

}  // namespace mineru::service
