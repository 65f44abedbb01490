// SPDX-License-Identifier: Apache-2.0
// The render helper's wire protocol (image/pdf/protocol.h): a stream of frames as either side
// reads it (header, the payload bound of its type, then the payload decoder), not Poppler.
// Invariants: a payload that decodes encodes back to the same bytes (the decoders accept
// exactly the bytes their fields need), and a decoded layout page is within its bounds.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "fuzz/fuzz_util.h"
#include "image/pdf/protocol.h"
#include "image/pdf/render_options.h"

namespace {

namespace proto = mineru::pdf::protocol;
using proto::MessageType;

// The frame as an encoder writes it, for the round trips.
std::string Frame(MessageType type, std::span<const uint8_t> payload) {
  std::string out;
  proto::AppendHeader(&out, type, payload.size());
  out.append(reinterpret_cast<const char*>(payload.data()), payload.size());
  return out;
}

// The largest payload a reader accepts for each type (helper_main.cc and pdf_document.cc
// check these before reading a payload).
uint64_t MaxPayload(MessageType type) {
  switch (type) {
    case MessageType::kOpen:
      return proto::MaxOpenPayload(mineru::pdf::kMaxPasswordBytes);
    case MessageType::kInfo:
      return proto::MaxInfoPayload(mineru::pdf::kDefaultMaxPages);
    case MessageType::kError:
      return proto::MaxErrorPayload();
    case MessageType::kLayoutPage:
      return proto::MaxLayoutPagePayload();
    case MessageType::kLayoutData:
      return proto::kMaxLayoutChunkBytes;
    case MessageType::kPage:
      return uint64_t{1} << 40;  // bounded by the header's own width x height (checked below)
    default:
      return proto::kRenderBytes;
  }
}

void DecodeOne(MessageType type, std::span<const uint8_t> payload) {
  using mineru::fuzz::AsText;
  const std::string frame = Frame(type, payload);
  switch (type) {
    case MessageType::kOpen:
      if (auto password = proto::DecodeOpen(payload)) {
        MINERU_CHECK(proto::EncodeOpen(*password) == frame);
      }
      break;
    case MessageType::kRender:
      if (auto request = proto::DecodeRender(payload)) {
        MINERU_CHECK(proto::EncodeRender(*request) == frame);
      }
      break;
    case MessageType::kInfo:
      if (auto info = proto::DecodeInfo(payload, mineru::pdf::kDefaultMaxPages)) {
        MINERU_CHECK(proto::EncodeInfo(*info) == frame);
      }
      break;
    case MessageType::kError:
      if (auto error = proto::DecodeError(payload)) {
        // The text's control characters become spaces; the rest survives.
        MINERU_CHECK(proto::EncodeError(*error).size() == frame.size());
        MINERU_CHECK(error->message.size() <= proto::kMaxErrorMessageBytes);
      }
      break;
    case MessageType::kPage:
      if (payload.size() >= proto::kPageHeaderBytes) {
        auto header = proto::DecodePageHeader(payload.first<proto::kPageHeaderBytes>());
        MINERU_CHECK(header.has_value(), "a page header of the right size always decodes");
        const std::string head = proto::EncodePageHeader(*header);
        MINERU_CHECK(head.substr(proto::kHeaderBytes) ==
                     AsText(payload.data(), proto::kPageHeaderBytes));
      }
      break;
    case MessageType::kLayoutPage:
      if (auto page = proto::DecodeLayoutPage(payload)) {
        MINERU_CHECK(page->page.boxes.size() <= mineru::pdf::kMaxLayoutBoxesPerPage);
        MINERU_CHECK(page->page.numbers.size() <= mineru::pdf::kMaxLayoutNumbersPerPage);
        MINERU_CHECK(proto::EncodeLayoutPage(*page) == frame);
      }
      break;
    case MessageType::kLayoutDone:
      if (auto done = proto::DecodeLayoutDone(payload)) {
        MINERU_CHECK(proto::EncodeLayoutDone(*done) == frame);
      }
      break;
    default:  // kClose, kLayoutFinish, kLayoutData carry no fields
      break;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::span<const uint8_t> rest(data, size);
  while (rest.size() >= proto::kHeaderBytes) {
    auto header = proto::ParseHeader(rest.first<proto::kHeaderBytes>());
    if (!header) return 0;
    rest = rest.subspan(proto::kHeaderBytes);
    std::string encoded;
    proto::AppendHeader(&encoded, header->type, header->payload_bytes);
    MINERU_CHECK(encoded.size() == proto::kHeaderBytes);
    if (header->payload_bytes > MaxPayload(header->type)) return 0;
    if (header->payload_bytes > rest.size()) return 0;  // the stream ends mid-frame
    DecodeOne(header->type, rest.first(header->payload_bytes));
    rest = rest.subspan(header->payload_bytes);
  }
  return 0;
}
