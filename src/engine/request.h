// SPDX-License-Identifier: Apache-2.0
// What a caller hands the engine and what it gets back: a generation request (images, prompt,
// sampling, limits, priority, deadline), the token events it streams, and its final result.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/byte_budget.h"
#include "engine/sampling.h"
#include "image/image.h"
#include "model/positions.h"
#include "text/chat_template.h"

namespace mineru::engine {

using Clock = std::chrono::steady_clock;

// One image of a request: either decoded RGB pixels, which the engine preprocesses with the
// checkpoint's preprocessor_config.json, or pixel values already in the image processor's
// layout (grid.t * grid.h * grid.w rows of patch_dim floats, merge-window order).
struct ImageInput {
  std::optional<image::RgbImage> rgb;
  std::vector<float> pixel_values;
  model::ImageGrid grid;
  // What the caller reserved for the decoded pixels (image/image_budget.h), shared by the
  // images of one request; it is given back when the last of them is dropped, which the engine
  // does as soon as they are encoded (or the request ends). Null: nothing reserved.
  std::shared_ptr<const ByteReservation> memory;
};

// A token the engine produced, delivered in order. `finished` marks the last event of a
// request (it carries no token when the request ended without emitting one).
struct TokenEvent {
  std::optional<int32_t> token;
  bool finished = false;
};

struct Request {
  // The prompt: chat messages (rendered with the Qwen2-VL chat template, one image part per
  // entry of `images`, in order) or ready prompt ids (image pads already expanded to
  // t*h*w/merge^2 per image). Exactly one of the two.
  std::vector<text::ChatMessage> messages;
  std::vector<int32_t> prompt_ids;
  std::vector<ImageInput> images;

  SamplingParams sampling;
  // New tokens at most; unset = the remaining context (max context - prompt length).
  std::optional<int64_t> max_new_tokens;
  // Tokens that end generation (not part of the output); unset = generation_config.json's
  // eos_token_id (151645 <|im_end|> and 151643 <|endoftext|> for Qwen2-VL).
  std::optional<std::vector<int32_t>> stop_ids;
  // Lower runs first (vLLM's rule); ties in arrival order.
  int32_t priority = 0;
  // Past this instant the request ends with FinishReason::kDeadline (tokens so far kept).
  std::optional<Clock::time_point> deadline;
  // Called on the engine thread for every token and once at the end. It must return quickly
  // and must not call into the engine; the pull interface (RequestHandle::Next) needs neither.
  std::function<void(const TokenEvent&)> on_token;
  // Keep the logits each output token was chosen from (after no rule was applied), for tests
  // and debugging: vocab floats per token.
  bool keep_logits = false;
  // Decode the output into GenerationResult::text when the request ends. Off for a caller that
  // builds the text itself as the tokens stream (the chat API, text/text_assembler.h), so each
  // request is detokenized once.
  bool decode_text = true;
};

enum class FinishReason { kStop, kLength, kCancelled, kDeadline, kError };

// "stop", "length", "cancelled", "deadline", "error".
std::string_view FinishReasonName(FinishReason reason);

struct Usage {
  int64_t prompt_tokens = 0;      // including image tokens
  int64_t image_tokens = 0;       // of prompt_tokens
  int64_t completion_tokens = 0;  // generated, including a final stop token
  int64_t recomputed_tokens = 0;  // prompt and output tokens prefilled again after preemption
};

// Wall-clock durations in seconds. Vision is the duration of the vision pass(es) that encoded
// the request's images (shared with the other images of that pass).
struct Timings {
  double queued = 0;               // submit -> admitted
  double vision = 0;               // image preprocessing and encoding
  double prefill = 0;              // admitted (after vision) -> first token
  double decode = 0;               // first token -> finish
  double time_to_first_token = 0;  // submit -> first token
  double total = 0;                // submit -> finish
};

struct GenerationResult {
  FinishReason finish_reason = FinishReason::kError;
  std::string error;         // with kError: what went wrong
  std::vector<int32_t> ids;  // output tokens, without the stop token
  // `ids` decoded with special tokens kept (text::DecodeGenerated); empty without a tokenizer or
  // with Request::decode_text off.
  std::string text;
  std::optional<int32_t> stop_id;  // the stop token that ended it (kStop)
  Usage usage;
  Timings timings;
  // Attempts after the first: a remote generator's retries (pipeline/remote_generator.h); the
  // engine makes one attempt.
  int32_t retries = 0;
  std::vector<std::vector<float>> logits;  // with Request::keep_logits
};

}  // namespace mineru::engine
