// SPDX-License-Identifier: Apache-2.0
#include "service/chat_images.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <utility>

#include "image/data_url.h"
#include "image/decode.h"
#include "image/image_budget.h"
#include "image/probe.h"
#include "service/url_fetch.h"

namespace mineru::service {
namespace {

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// One image part's file bytes.
Result<std::vector<uint8_t>> ReadBytes(const ImagePart& part, const OpenAiOptions& options) {
  const std::string_view url = part.url;
  if (IsHttpUrl(url)) {
    if (!options.allow_remote_images) {
      return Fail(ErrorCode::kInvalidArgument,
                  "{}: remote image URLs are not allowed on this server (start it with "
                  "--allow-remote-images to fetch them); send a data: URL "
                  "(data:image/png;base64,...)",
                  part.where);
    }
    FetchLimits limits;
    limits.max_bytes = options.max_image_bytes;
    limits.timeout = options.remote_image_timeout;
    limits.max_redirects = options.remote_image_max_redirects;
    limits.allow_private_addresses = options.allow_private_remote_images;
    auto fetched = FetchUrl(url, limits);
    if (!fetched) {
      return Fail(ErrorCode::kInvalidArgument, "{}: cannot fetch the image: {}", part.where,
                  fetched.error().message);
    }
    return std::vector<uint8_t>(fetched->begin(), fetched->end());
  }
  if (StartsWith(url, "data:")) {
    auto data = image::ParseDataUrl(url, options.max_image_bytes);
    if (!data) {
      return Fail(ErrorCode::kInvalidArgument, "{}: bad image data URL: {}", part.where,
                  data.error().message);
    }
    if (!StartsWith(data->mime_type, "image/")) {
      return Fail(ErrorCode::kInvalidArgument, "{}: data URL type '{}' is not an image", part.where,
                  data->mime_type);
    }
    return std::move(data->bytes);
  }
  // file:// would read the server's own files; other schemes have no meaning here.
  return Fail(ErrorCode::kInvalidArgument,
              "{}: image URLs must be data: URLs (or http(s):// where the server allows "
              "remote images); this scheme is never fetched",
              part.where);
}

tl::unexpected<Error> BadImage(const ImagePart& part, const Error& error) {
  return Fail(ErrorCode::kInvalidArgument, "{}: unsupported or corrupt image: {}", part.where,
              error.message);
}

struct ReadImage {
  std::vector<uint8_t> bytes;
  image::ImageHeader header;
};

}  // namespace

Result<std::vector<engine::ImageInput>> LoadChatImages(const std::vector<ImagePart>& parts,
                                                       const OpenAiOptions& options) {
  const ChatLimits& limits = options.limits;
  if (static_cast<int64_t>(parts.size()) > limits.max_images) {
    return Fail(ErrorCode::kInvalidArgument,
                "{}: {} images in one request; the limit is {} (--max-images-per-request)",
                parts[static_cast<size_t>(limits.max_images)].where, parts.size(),
                limits.max_images);
  }
  image::DecodeOptions decode;
  decode.limits.max_bytes = options.max_image_bytes;
  const image::ImageBudget& budget = limits.images;
  ByteReservation held;  // of budget.in_flight; given back on every early return
  std::vector<ReadImage> read;
  read.reserve(parts.size());
  uint64_t decoded = 0, scratch = 0;
  for (const ImagePart& part : parts) {
    MINERU_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, ReadBytes(part, options));
    if (Status taken = image::TryHoldInFlight(budget, bytes.size(), held); !taken) {
      return tl::unexpected(WithContext(taken.error(), part.where));
    }
    auto header = image::ProbeImage(bytes, decode.limits);
    if (!header) return BadImage(part, header.error());
    decoded += header->decoded_bytes();
    if (Status within = image::CheckRequestDecodedBytes(decoded, budget, "the images so far");
        !within) {
      return tl::unexpected(WithContext(within.error(), part.where));
    }
    scratch = std::max(scratch, header->scratch_bytes);
    read.push_back({std::move(bytes), *header});
  }
  // Decoded one after another: every image's pixels, and one image's scratch at a time.
  if (Status taken = image::TryHoldInFlight(budget, decoded + scratch, held); !taken) {
    return tl::unexpected(WithContext(taken.error(), "messages"));
  }
  std::vector<engine::ImageInput> images;
  images.reserve(read.size());
  uint64_t kept = 0;
  for (size_t i = 0; i < read.size(); ++i) {
    image::DecodeOptions within = decode;
    within.limits = image::LimitsWithin(read[i].header, decode.limits);
    auto image = image::DecodeImage(read[i].bytes, within);
    if (!image) return BadImage(parts[i], image.error());
    // Its file bytes are no longer needed (held only when there is a budget).
    if (held.bytes() >= read[i].bytes.size()) held.ShrinkTo(held.bytes() - read[i].bytes.size());
    std::vector<uint8_t>().swap(read[i].bytes);
    kept += image->image.pixels.size();
    engine::ImageInput input;
    input.rgb = std::move(image->image);
    images.push_back(std::move(input));
  }
  held.ShrinkTo(kept);
  if (held.bytes() > 0) {
    auto memory = std::make_shared<const ByteReservation>(std::move(held));
    for (engine::ImageInput& input : images) input.memory = memory;
  }
  return images;
}

}  // namespace mineru::service
