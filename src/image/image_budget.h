// SPDX-License-Identifier: Apache-2.0
// What images may cost a server: a limit per request on the bytes its images decode to, and a
// process-wide budget of the memory held for images being read (their file bytes, decoded
// pixels and decoding scratch) shared by every request and document at once. Both are checked
// from the images' headers (image/probe.h) before the first one is decoded.
//
// A request over its own limit, or one that could never fit in the whole process budget, is a
// permanent refusal (kResourceExhausted naming the limit: HTTP 413 for a chat request, 400 for an
// upload); a process budget that is full now is a condition that passes (kUnavailable: HTTP 503
// with Retry-After for a chat request; a document task waits for it instead).
#pragma once

#include <atomic>
#include <cstdint>
#include <string_view>

#include "base/byte_budget.h"
#include "base/status.h"

namespace mineru::image {

// Per request: one image of the largest size DecodeLimits allows (Pillow's 89,478,485 pixels
// decode to 268,435,455 bytes) fits; sixteen 9000 x 9000 images (3.9 GB) do not.
inline constexpr uint64_t kDefaultMaxRequestDecodedBytes = uint64_t{256} << 20;
// Process-wide: every request that passes its own limit with the default decoding limits fits
// when the budget is empty (256 MiB of pixels plus at most 13 bytes a pixel of scratch for the
// largest image, 16-bit RGBA TIFF planes or an animated WebP, is under 1 GiB).
inline constexpr uint64_t kDefaultMaxImageBytesInFlight = uint64_t{1} << 30;

struct ImageBudget {
  // Bytes (width x height x 3) that all images of one request decode to: a chat request's image
  // parts, an uploaded image document (--max-request-decoded-bytes).
  uint64_t max_request_decoded_bytes = kDefaultMaxRequestDecodedBytes;
  // Memory held for images being read, process-wide (--max-image-bytes-in-flight); null: not
  // bounded. Must outlive everything that holds a reservation of it.
  ByteBudget* in_flight = nullptr;
};

// kResourceExhausted when `decoded` bytes are over budget.max_request_decoded_bytes, naming the
// limit and its flag; `what` says whose images they are ("the images of this request").
Status CheckRequestDecodedBytes(uint64_t decoded, const ImageBudget& budget, std::string_view what);

// `bytes` more of budget.in_flight for `held` (which must come from budget.in_flight, or be
// empty the first time), without waiting: kResourceExhausted when the request would then hold
// more than the whole budget (it never fits: permanent), kUnavailable when the budget is full
// now. Nothing is taken on failure. Without a budget: nothing to take, always OK.
Status TryHoldInFlight(const ImageBudget& budget, uint64_t bytes, ByteReservation& held);

// As TryHoldInFlight for a fresh reservation, but waits while the budget is full; kCancelled
// when `cancel` turns true while waiting.
Result<ByteReservation> HoldInFlight(const ImageBudget& budget, uint64_t bytes,
                                     const std::atomic<bool>* cancel);

}  // namespace mineru::image
