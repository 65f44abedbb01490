// SPDX-License-Identifier: Apache-2.0
// A POST /v1/chat/completions body as the endpoint reads it: ParseJson (base/json.h), then
// ParseChatRequest (service/chat_request.h) with serve's default options, image data URLs
// decoded (remote images off, as by default).
// Invariants: an accepted request has one decoded image per image part, in bounds, no empty
// stop string and a token limit of at least 1; a refusal is 400 or 404 material, never another
// kind of error.
#include <cstddef>
#include <cstdint>

#include "base/json.h"
#include "fuzz/fuzz_util.h"
#include "service/chat_request.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace mineru;
  auto body = ParseJson(fuzz::AsText(data, size), "request body");
  if (!body) return 0;
  static const service::OpenAiOptions options;
  auto parsed = service::ParseChatRequest(*body, options);
  if (!parsed) {
    const ErrorCode code = parsed.error().code;
    MINERU_CHECK(code == ErrorCode::kInvalidArgument || code == ErrorCode::kNotFound, "{}",
                 parsed.error().ToString());
    return 0;
  }
  const engine::Request& request = parsed->request;
  size_t image_parts = 0;
  for (const text::ChatMessage& message : request.messages) {
    for (const text::ChatPart& part : message.content) {
      image_parts += part.kind == text::ChatPart::Kind::kImage ? 1 : 0;
    }
  }
  MINERU_CHECK(image_parts == request.images.size());
  for (const engine::ImageInput& image : request.images) {
    MINERU_CHECK(image.rgb.has_value() && !image.rgb->empty());
    MINERU_CHECK(image.rgb->pixels.size() == static_cast<size_t>(image.rgb->width) *
                                                 static_cast<size_t>(image.rgb->height) * 3);
  }
  for (const std::string& stop : parsed->stop) MINERU_CHECK(!stop.empty());
  MINERU_CHECK(!request.max_new_tokens || *request.max_new_tokens >= 1);
  return 0;
}
