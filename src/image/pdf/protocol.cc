// SPDX-License-Identifier: Apache-2.0
#include "image/pdf/protocol.h"

#include <bit>
#include <cmath>
#include <cstring>

#include "image/pdf/render_options.h"

namespace mineru::pdf::protocol {
namespace {

// Little-endian field writer and bounds-checked reader; explicit byte order so that the format
// does not depend on the machine.
class Writer {
 public:
  void U16(uint16_t v) {
    for (int i = 0; i < 2; ++i) bytes_.push_back(static_cast<char>(v >> (8 * i)));
  }
  void U32(uint32_t v) {
    for (int i = 0; i < 4; ++i) bytes_.push_back(static_cast<char>(v >> (8 * i)));
  }
  void U64(uint64_t v) {
    for (int i = 0; i < 8; ++i) bytes_.push_back(static_cast<char>(v >> (8 * i)));
  }
  void U8(uint8_t v) { bytes_.push_back(static_cast<char>(v)); }
  void F64(double v) { U64(std::bit_cast<uint64_t>(v)); }
  void Bytes(std::string_view s) { bytes_.append(s); }
  std::string& str() { return bytes_; }

 private:
  std::string bytes_;
};

class Reader {
 public:
  Reader(std::span<const uint8_t> bytes, std::string_view what) : bytes_(bytes), what_(what) {}

  Result<uint64_t> Uint(int n) {
    MINERU_RETURN_IF_ERROR(Need(n));
    uint64_t v = 0;
    for (int i = 0; i < n; ++i) v |= uint64_t{bytes_[pos_ + i]} << (8 * i);
    pos_ += n;
    return v;
  }
  Result<uint32_t> U32() {
    MINERU_ASSIGN_OR_RETURN(uint64_t v, Uint(4));
    return static_cast<uint32_t>(v);
  }
  Result<uint8_t> U8() {
    MINERU_ASSIGN_OR_RETURN(uint64_t v, Uint(1));
    return static_cast<uint8_t>(v);
  }
  Result<double> F64() {
    MINERU_ASSIGN_OR_RETURN(uint64_t v, Uint(8));
    return std::bit_cast<double>(v);
  }
  Result<std::string> Bytes(size_t n) {
    MINERU_RETURN_IF_ERROR(Need(n));
    std::string s(reinterpret_cast<const char*>(bytes_.data() + pos_), n);
    pos_ += n;
    return s;
  }
  Status Finish() const {
    if (pos_ != bytes_.size()) {
      return Fail(ErrorCode::kCorrupt, "{} message has {} bytes, its fields need {}", what_,
                  bytes_.size(), pos_);
    }
    return OkStatus();
  }

 private:
  Status Need(size_t n) const {
    if (bytes_.size() - pos_ < n) {
      return Fail(ErrorCode::kCorrupt, "{} message ends after {} bytes", what_, bytes_.size());
    }
    return OkStatus();
  }

  std::span<const uint8_t> bytes_;
  std::string_view what_;
  size_t pos_ = 0;
};

std::string Frame(MessageType type, std::string_view payload) {
  std::string out;
  AppendHeader(&out, type, payload.size());
  out.append(payload);
  return out;
}

}  // namespace

std::string_view MessageTypeName(MessageType type) {
  switch (type) {
    case MessageType::kOpen:
      return "open";
    case MessageType::kRender:
      return "render";
    case MessageType::kClose:
      return "close";
    case MessageType::kLayoutPage:
      return "layout page";
    case MessageType::kLayoutFinish:
      return "layout finish";
    case MessageType::kLayoutData:
      return "layout data";
    case MessageType::kLayoutDone:
      return "layout done";
    case MessageType::kInfo:
      return "info";
    case MessageType::kPage:
      return "page";
    case MessageType::kError:
      return "error";
  }
  return "unknown";
}

Result<FrameHeader> ParseHeader(std::span<const uint8_t, kHeaderBytes> bytes) {
  Reader r(bytes, "frame header");
  MINERU_ASSIGN_OR_RETURN(uint64_t magic, r.Uint(4));
  MINERU_ASSIGN_OR_RETURN(uint64_t version, r.Uint(2));
  MINERU_ASSIGN_OR_RETURN(uint64_t type, r.Uint(2));
  MINERU_ASSIGN_OR_RETURN(uint64_t length, r.Uint(8));
  if (magic != kMagic) {
    return Fail(ErrorCode::kCorrupt, "frame does not start with the magic bytes (got 0x{:08x})",
                magic);
  }
  if (version != kVersion) {
    return Fail(ErrorCode::kCorrupt, "frame has protocol version {}, expected {}", version,
                kVersion);
  }
  switch (static_cast<MessageType>(type)) {
    case MessageType::kOpen:
    case MessageType::kRender:
    case MessageType::kClose:
    case MessageType::kLayoutPage:
    case MessageType::kLayoutFinish:
    case MessageType::kInfo:
    case MessageType::kPage:
    case MessageType::kError:
    case MessageType::kLayoutData:
    case MessageType::kLayoutDone:
      return FrameHeader{static_cast<MessageType>(type), length};
  }
  return Fail(ErrorCode::kCorrupt, "frame has unknown message type 0x{:x}", type);
}

void AppendHeader(std::string* out, MessageType type, uint64_t payload_bytes) {
  Writer w;
  w.U32(kMagic);
  w.U16(kVersion);
  w.U16(static_cast<uint16_t>(type));
  w.U64(payload_bytes);
  out->append(w.str());
}

std::string EncodeOpen(std::string_view password) {
  Writer w;
  w.U32(static_cast<uint32_t>(password.size()));
  w.Bytes(password);
  return Frame(MessageType::kOpen, w.str());
}

std::string EncodeRender(const RenderRequest& request) {
  Writer w;
  w.U32(request.index);
  w.F64(request.scale);
  w.U32(request.width);
  w.U32(request.height);
  return Frame(MessageType::kRender, w.str());
}

std::string EncodeClose() { return Frame(MessageType::kClose, {}); }

std::string EncodeInfo(const DocumentInfo& info) {
  Writer w;
  w.U32(static_cast<uint32_t>(info.pages.size()));
  for (const PageInfo& page : info.pages) {
    w.F64(page.width_pt);
    w.F64(page.height_pt);
    w.U32(static_cast<uint32_t>(page.rotation));
  }
  return Frame(MessageType::kInfo, w.str());
}

std::string EncodeError(const ErrorReply& error) {
  Writer w;
  w.U32(static_cast<uint32_t>(error.code));
  w.U32(error.page);
  w.Bytes(std::string_view(error.message).substr(0, kMaxErrorMessageBytes));
  return Frame(MessageType::kError, w.str());
}

std::string EncodePageHeader(const PageHeader& header) {
  Writer w;
  w.U32(header.index);
  w.U32(header.width);
  w.U32(header.height);
  w.F64(header.scale);
  std::string out;
  const uint64_t pixels = uint64_t{header.width} * header.height;
  AppendHeader(&out, MessageType::kPage, kPageHeaderBytes + pixels * 3);
  out.append(w.str());
  return out;
}

std::string EncodeLayoutPage(const LayoutPageRequest& request) {
  const LayoutPagePlan& page = request.page;
  Writer w;
  w.U32(request.flags);
  w.U32(static_cast<uint32_t>(page.page_index));
  w.U32(static_cast<uint32_t>(page.boxes.size()));
  w.U32(static_cast<uint32_t>(page.numbers.size()));
  for (const LayoutBox& box : page.boxes) {
    for (double v : box.rect) w.F64(v);
    w.U8(box.rgb.r);
    w.U8(box.rgb.g);
    w.U8(box.rgb.b);
    w.U8(static_cast<uint8_t>(box.paint));
  }
  for (const LayoutNumber& number : page.numbers) {
    for (double v : number.rect) w.F64(v);
    w.U32(number.number);
  }
  return Frame(MessageType::kLayoutPage, w.str());
}

std::string EncodeLayoutFinish() { return Frame(MessageType::kLayoutFinish, {}); }

std::string EncodeLayoutDone(const LayoutDone& done) {
  Writer w;
  w.U32(done.page);
  w.U32(done.flags);
  return Frame(MessageType::kLayoutDone, w.str());
}

std::string EncodeLayoutDataHeader(size_t bytes) {
  std::string out;
  AppendHeader(&out, MessageType::kLayoutData, bytes);
  return out;
}

Result<std::string> DecodeOpen(std::span<const uint8_t> payload) {
  Reader r(payload, "open");
  MINERU_ASSIGN_OR_RETURN(uint32_t length, r.U32());
  MINERU_ASSIGN_OR_RETURN(std::string password, r.Bytes(length));
  MINERU_RETURN_IF_ERROR(r.Finish());
  return password;
}

Result<RenderRequest> DecodeRender(std::span<const uint8_t> payload) {
  Reader r(payload, "render");
  RenderRequest request;
  MINERU_ASSIGN_OR_RETURN(request.index, r.U32());
  MINERU_ASSIGN_OR_RETURN(request.scale, r.F64());
  MINERU_ASSIGN_OR_RETURN(request.width, r.U32());
  MINERU_ASSIGN_OR_RETURN(request.height, r.U32());
  MINERU_RETURN_IF_ERROR(r.Finish());
  if (!std::isfinite(request.scale) || request.scale <= 0) {
    return Fail(ErrorCode::kCorrupt, "render request has scale {}", request.scale);
  }
  return request;
}

Result<DocumentInfo> DecodeInfo(std::span<const uint8_t> payload, int max_pages) {
  Reader r(payload, "info");
  MINERU_ASSIGN_OR_RETURN(uint32_t count, r.U32());
  if (count > static_cast<uint32_t>(max_pages)) {
    return Fail(ErrorCode::kCorrupt, "info lists {} pages, over the limit of {}", count, max_pages);
  }
  if (payload.size() != 4 + kInfoPageBytes * count) {
    return Fail(ErrorCode::kCorrupt, "info for {} pages has {} bytes, expected {}", count,
                payload.size(), 4 + kInfoPageBytes * count);
  }
  DocumentInfo info;
  info.pages.resize(count);
  for (PageInfo& page : info.pages) {
    MINERU_ASSIGN_OR_RETURN(page.width_pt, r.F64());
    MINERU_ASSIGN_OR_RETURN(page.height_pt, r.F64());
    MINERU_ASSIGN_OR_RETURN(uint32_t rotation, r.U32());
    if (rotation % 90 != 0 || rotation >= 360) {
      return Fail(ErrorCode::kCorrupt, "info gives a page rotation of {} degrees", rotation);
    }
    page.rotation = static_cast<int>(rotation);
  }
  MINERU_RETURN_IF_ERROR(r.Finish());
  return info;
}

Result<ErrorReply> DecodeError(std::span<const uint8_t> payload) {
  Reader r(payload, "error");
  ErrorReply error;
  MINERU_ASSIGN_OR_RETURN(uint32_t code, r.U32());
  if (code > static_cast<uint32_t>(ErrorCode::kInternal)) {
    return Fail(ErrorCode::kCorrupt, "error message has unknown code {}", code);
  }
  error.code = static_cast<ErrorCode>(code);
  MINERU_ASSIGN_OR_RETURN(error.page, r.U32());
  if (payload.size() - 8 > kMaxErrorMessageBytes) {
    return Fail(ErrorCode::kCorrupt, "error message has {} bytes of text, over {}",
                payload.size() - 8, kMaxErrorMessageBytes);
  }
  MINERU_ASSIGN_OR_RETURN(error.message, r.Bytes(payload.size() - 8));
  // The text ends up on a terminal or in a log: keep it printable.
  for (char& c : error.message) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  }
  return error;
}

Result<PageHeader> DecodePageHeader(std::span<const uint8_t, kPageHeaderBytes> bytes) {
  Reader r(bytes, "page");
  PageHeader header;
  MINERU_ASSIGN_OR_RETURN(header.index, r.U32());
  MINERU_ASSIGN_OR_RETURN(header.width, r.U32());
  MINERU_ASSIGN_OR_RETURN(header.height, r.U32());
  MINERU_ASSIGN_OR_RETURN(header.scale, r.F64());
  return header;
}

Result<LayoutPageRequest> DecodeLayoutPage(std::span<const uint8_t> payload) {
  Reader r(payload, "layout page");
  LayoutPageRequest request;
  MINERU_ASSIGN_OR_RETURN(request.flags, r.U32());
  MINERU_ASSIGN_OR_RETURN(uint32_t index, r.U32());
  MINERU_ASSIGN_OR_RETURN(uint32_t boxes, r.U32());
  MINERU_ASSIGN_OR_RETURN(uint32_t numbers, r.U32());
  if (index > static_cast<uint32_t>(kMaxPagesCeiling) || boxes > kMaxLayoutBoxesPerPage ||
      numbers > kMaxLayoutNumbersPerPage) {
    return Fail(ErrorCode::kCorrupt, "layout page message for page {} with {} boxes, {} numbers",
                index, boxes, numbers);
  }
  const uint64_t expected = kLayoutPageHeaderBytes + uint64_t{boxes} * kLayoutBoxBytes +
                            uint64_t{numbers} * kLayoutNumberBytes;
  if (payload.size() != expected) {
    return Fail(ErrorCode::kCorrupt, "layout page message has {} bytes, its counts need {}",
                payload.size(), expected);
  }
  LayoutPagePlan& page = request.page;
  page.page_index = static_cast<int>(index);
  page.boxes.resize(boxes);
  for (LayoutBox& box : page.boxes) {
    for (double& v : box.rect) {
      MINERU_ASSIGN_OR_RETURN(v, r.F64());
    }
    MINERU_ASSIGN_OR_RETURN(box.rgb.r, r.U8());
    MINERU_ASSIGN_OR_RETURN(box.rgb.g, r.U8());
    MINERU_ASSIGN_OR_RETURN(box.rgb.b, r.U8());
    MINERU_ASSIGN_OR_RETURN(uint8_t paint, r.U8());
    box.paint = static_cast<LayoutPaint>(paint);
  }
  page.numbers.resize(numbers);
  for (LayoutNumber& number : page.numbers) {
    for (double& v : number.rect) {
      MINERU_ASSIGN_OR_RETURN(v, r.F64());
    }
    MINERU_ASSIGN_OR_RETURN(number.number, r.U32());
  }
  MINERU_RETURN_IF_ERROR(r.Finish());
  if (auto valid = ValidateLayoutPage(page, -1, 1); !valid) {
    return Fail(ErrorCode::kCorrupt, "{}", valid.error().message);
  }
  return request;
}

Result<LayoutDone> DecodeLayoutDone(std::span<const uint8_t> payload) {
  Reader r(payload, "layout done");
  LayoutDone done;
  MINERU_ASSIGN_OR_RETURN(done.page, r.U32());
  MINERU_ASSIGN_OR_RETURN(done.flags, r.U32());
  MINERU_RETURN_IF_ERROR(r.Finish());
  return done;
}

}  // namespace mineru::pdf::protocol
