// SPDX-License-Identifier: Apache-2.0
#include "image/image_budget.h"

#include <algorithm>
#include <optional>
#include <string_view>
#include <utility>

namespace mineru::image {
namespace {

tl::unexpected<Error> NeverFits(uint64_t bytes, const ByteBudget& budget) {
  return Fail(ErrorCode::kResourceExhausted,
              "reading these images needs {} bytes of memory (files, pixels and decoding "
              "scratch); the server holds at most {} bytes for images in flight "
              "(--max-image-bytes-in-flight)",
              bytes, budget.capacity());
}

}  // namespace

Status CheckRequestDecodedBytes(uint64_t decoded, const ImageBudget& budget,
                                std::string_view what) {
  if (decoded <= budget.max_request_decoded_bytes) return OkStatus();
  return Fail(ErrorCode::kResourceExhausted,
              "{} decode to {} bytes (width x height x 3 each); the limit is {} bytes per "
              "request (--max-request-decoded-bytes)",
              what, decoded, budget.max_request_decoded_bytes);
}

Status TryHoldInFlight(const ImageBudget& budget, uint64_t bytes, ByteReservation& held) {
  ByteBudget* in_flight = budget.in_flight;
  if (in_flight == nullptr || bytes == 0) return OkStatus();
  if (bytes > in_flight->capacity() - std::min(held.bytes(), in_flight->capacity())) {
    return NeverFits(held.bytes() + bytes, *in_flight);
  }
  if (held.bytes() == 0) {
    std::optional<ByteReservation> taken = in_flight->TryReserve(bytes);
    if (taken) {
      held = std::move(*taken);
      return OkStatus();
    }
  } else if (held.TryGrow(bytes)) {
    return OkStatus();
  }
  return Fail(ErrorCode::kUnavailable,
              "the server's memory for images in flight is in use by other requests ({} of {} "
              "bytes, --max-image-bytes-in-flight); retry shortly",
              in_flight->in_use(), in_flight->capacity());
}

Result<ByteReservation> HoldInFlight(const ImageBudget& budget, uint64_t bytes,
                                     const std::atomic<bool>* cancel) {
  ByteBudget* in_flight = budget.in_flight;
  if (in_flight == nullptr || bytes == 0) return ByteReservation();
  if (bytes > in_flight->capacity()) return NeverFits(bytes, *in_flight);
  return in_flight->Reserve(bytes, cancel);
}

}  // namespace mineru::image
