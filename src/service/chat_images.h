// SPDX-License-Identifier: Apache-2.0
// The image parts of one chat completion request, turned into engine images under the request's
// budgets (service/chat_limits.h, image/image_budget.h). Nothing is decoded before the whole
// request is known to fit:
//   1. the parts are counted: more than limits.max_images is refused before any is read;
//   2. each part's bytes are read (a data: URL decoded, or a remote URL fetched where allowed)
//      and its header probed (image/probe.h); the file bytes, once read, are held in the
//      process budget of images in flight, and the decoded sizes summed: past
//      max_request_decoded_bytes the request is refused at that part, before the next is read;
//   3. the pixels and the largest decoding scratch are reserved in the process budget;
//   4. the images are decoded one by one, each within its probed size (its file bytes given
//      back as it is done), and the scratch is given back.
// The reservation left (the decoded pixels) travels with the images (engine::ImageInput::memory)
// and is released when the engine drops them after encoding, or when the request ends.
//
// Errors: kInvalidArgument (a bad URL, scheme, data URL, or image; too many images: 400);
// kResourceExhausted (over max_request_decoded_bytes, or more than the whole process budget can
// ever hold: 413); kUnavailable (the process budget is full now: 503 with Retry-After). Every
// message names the part ("messages[1].content[0]") and, for a limit, the limit and its flag.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "engine/request.h"
#include "service/openai_api.h"

namespace mineru::service {

struct ImagePart {
  std::string_view url;  // points into the request body, which must outlive the call
  std::string where;     // "messages[1].content[0]"
};

Result<std::vector<engine::ImageInput>> LoadChatImages(const std::vector<ImagePart>& parts,
                                                       const OpenAiOptions& options);

}  // namespace mineru::service
