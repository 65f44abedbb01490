// SPDX-License-Identifier: Apache-2.0
// The wire format between the client (PdfDocument) and the render helper (mineru-pdf-render),
// spoken over a Unix stream socket that is the helper's stdin and stdout. docs/PDF.md has the
// full description; in short, every message is a 16-byte header
//
//   u32 magic "MRND" | u16 version (1) | u16 type | u64 payload length
//
// followed by the payload, all little-endian. The document itself is not sent: it reaches the
// helper as file descriptor 3 (the caller's file, or a sealed memfd holding the caller's bytes).
//
//   client -> helper: kOpen {u32 password length, password}       once, first
//                     kRender {u32 index, f64 scale, u32 width, u32 height}   per page
//                     kLayoutPage {u32 flags, u32 index, u32 boxes, u32 numbers,
//                                  boxes x (4 f64 rect, u8 r, g, b, paint),
//                                  numbers x (4 f64 rect, u32 number)}      per layout page
//                     kLayoutFinish {}                                 after the last one
//                     kClose {}
//   helper -> client: kInfo {u32 n, n x (f64 width_pt, f64 height_pt, u32 rotation)}
//                     kPage {u32 index, u32 width, u32 height, f64 scale, width*height*3 RGB}
//                     kLayoutData {bytes of the layout PDF}   any number, before kLayoutDone
//                     kLayoutDone {u32 index or ~0 (finish), u32 flags}
//                     kError {u32 error code, u32 page index or ~0, UTF-8 message}
//
// Neither side trusts the other: each reader checks the magic, the version, that the type is
// one it expects now, and that every length is exactly what the fields imply and within its
// bound before reading or allocating anything.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "base/status.h"
#include "image/pdf/layout_plan.h"
#include "image/pdf/page_image.h"

namespace mineru::pdf::protocol {

inline constexpr uint32_t kMagic = 0x444E524D;  // the bytes "MRND"
inline constexpr uint16_t kVersion = 1;
inline constexpr size_t kHeaderBytes = 16;
inline constexpr size_t kInfoPageBytes = 20;
inline constexpr size_t kPageHeaderBytes = 20;
inline constexpr size_t kRenderBytes = 20;
// Longest error text a helper may send; longer Poppler messages are cut before sending.
inline constexpr size_t kMaxErrorMessageBytes = 4096;
inline constexpr uint32_t kNoPage = 0xFFFFFFFFu;
// Layout messages: the fixed part of kLayoutPage and kLayoutDone, one box or number, and the
// largest piece of the layout PDF one kLayoutData frame carries.
inline constexpr size_t kLayoutPageHeaderBytes = 16;
inline constexpr size_t kLayoutBoxBytes = 36;
inline constexpr size_t kLayoutNumberBytes = 36;
inline constexpr size_t kLayoutDoneBytes = 8;
inline constexpr size_t kMaxLayoutChunkBytes = 1 << 20;
// kLayoutPage flags: the page starts a new layout PDF (any unfinished one is dropped).
inline constexpr uint32_t kLayoutFirstPage = 1;
// kLayoutDone flags: the helper found no font, so the page's numbers were not drawn.
inline constexpr uint32_t kLayoutNumbersSkipped = 1;

// Exit statuses of the helper: 0 done (kClose or end of input), 2 bad command line, 3 the client
// broke the protocol, 4 the client went away mid-reply, 5 out of memory (RLIMIT_AS).
inline constexpr int kExitUsage = 2;
inline constexpr int kExitProtocol = 3;
inline constexpr int kExitWrite = 4;
inline constexpr int kExitNoMemory = 5;

enum class MessageType : uint16_t {
  kOpen = 1,
  kRender = 2,
  kClose = 3,
  kLayoutPage = 4,
  kLayoutFinish = 5,
  kInfo = 0x81,
  kPage = 0x82,
  kError = 0x83,
  kLayoutData = 0x84,
  kLayoutDone = 0x85,
};

std::string_view MessageTypeName(MessageType type);

struct FrameHeader {
  MessageType type = MessageType::kClose;
  uint64_t payload_bytes = 0;
};

// The header of a frame; kCorrupt for a wrong magic, version or unknown type.
Result<FrameHeader> ParseHeader(std::span<const uint8_t, kHeaderBytes> bytes);
// Appends a header to `out`.
void AppendHeader(std::string* out, MessageType type, uint64_t payload_bytes);

struct RenderRequest {
  uint32_t index = 0;
  double scale = 0;
  uint32_t width = 0;
  uint32_t height = 0;
};

struct PageHeader {
  uint32_t index = 0;
  uint32_t width = 0;
  uint32_t height = 0;
  double scale = 0;
};

struct LayoutPageRequest {
  uint32_t flags = 0;
  LayoutPagePlan page;
};

struct LayoutDone {
  uint32_t page = kNoPage;  // the page drawn, or kNoPage for the answer to kLayoutFinish
  uint32_t flags = 0;
};

struct ErrorReply {
  ErrorCode code = ErrorCode::kInternal;
  uint32_t page = kNoPage;
  std::string message;
};

// Whole frames (header + payload), ready to write.
std::string EncodeOpen(std::string_view password);
std::string EncodeRender(const RenderRequest& request);
std::string EncodeClose();
std::string EncodeInfo(const DocumentInfo& info);
std::string EncodeError(const ErrorReply& error);
// Only the header part of a page frame; the pixels follow it.
std::string EncodePageHeader(const PageHeader& header);
// The page must pass ValidateLayoutPage (the bounds make every count fit a u32).
std::string EncodeLayoutPage(const LayoutPageRequest& request);
std::string EncodeLayoutFinish();
std::string EncodeLayoutDone(const LayoutDone& done);
// Only the header of a kLayoutData frame; `bytes` (1 .. kMaxLayoutChunkBytes) follow it.
std::string EncodeLayoutDataHeader(size_t bytes);

// Payload decoders. Each checks that the payload has exactly the bytes its fields need.
Result<std::string> DecodeOpen(std::span<const uint8_t> payload);
Result<RenderRequest> DecodeRender(std::span<const uint8_t> payload);
// max_pages bounds the page table before anything is allocated.
Result<DocumentInfo> DecodeInfo(std::span<const uint8_t> payload, int max_pages);
Result<ErrorReply> DecodeError(std::span<const uint8_t> payload);
Result<PageHeader> DecodePageHeader(std::span<const uint8_t, kPageHeaderBytes> bytes);
// Also checks the page as ValidateLayoutPage does (without a page count); kCorrupt otherwise.
Result<LayoutPageRequest> DecodeLayoutPage(std::span<const uint8_t> payload);
Result<LayoutDone> DecodeLayoutDone(std::span<const uint8_t> payload);

// Upper bounds on payload lengths, checked right after the header is read.
inline constexpr uint64_t MaxOpenPayload(size_t max_password) { return 4 + max_password; }
inline constexpr uint64_t MaxInfoPayload(int max_pages) {
  return 4 + kInfoPageBytes * static_cast<uint64_t>(max_pages);
}
inline constexpr uint64_t MaxErrorPayload() { return 8 + kMaxErrorMessageBytes; }
inline constexpr uint64_t MaxLayoutPagePayload() {
  return kLayoutPageHeaderBytes + kLayoutBoxBytes * uint64_t{kMaxLayoutBoxesPerPage} +
         kLayoutNumberBytes * uint64_t{kMaxLayoutNumbersPerPage};
}

}  // namespace mineru::pdf::protocol
