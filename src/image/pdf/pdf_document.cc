// SPDX-License-Identifier: Apache-2.0
#include "image/pdf/pdf_document.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <new>
#include <string_view>
#include <utility>

#include "image/pdf/protocol.h"

namespace mineru::pdf {
namespace {

namespace proto = protocol;

// Poppler, like Acrobat, accepts a header anywhere in the first 1024 bytes.
constexpr size_t kHeaderWindow = 1024;

Status CheckLooksLikePdf(std::string_view head, int64_t size, int64_t max_bytes) {
  if (size == 0) return Fail(ErrorCode::kCorrupt, "empty file, not a PDF");
  if (size > max_bytes) {
    return Fail(ErrorCode::kResourceExhausted, "{} bytes exceed --max-document-bytes {}", size,
                max_bytes);
  }
  if (head.find("%PDF-") == std::string_view::npos) {
    return Fail(ErrorCode::kCorrupt, "not a PDF (no %PDF- header in the first {} bytes)",
                kHeaderWindow);
  }
  return OkStatus();
}

class UniqueFd {
 public:
  explicit UniqueFd(int fd) : fd_(fd) {}
  ~UniqueFd() {
    if (fd_ >= 0) ::close(fd_);
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

std::span<const uint8_t> AsBytes(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

std::vector<std::string> HelperArgs(const RenderOptions& options) {
  const RenderLimits& l = options.limits;
  return {"--max-pages",          std::to_string(l.max_pages),
          "--max-page-pixels",    std::to_string(l.max_page_pixels),
          "--max-document-bytes", std::to_string(l.max_document_bytes),
          "--page-cpu-seconds",   std::to_string(l.page_cpu_seconds),
          "--helper-memory",      std::to_string(l.helper_memory_bytes)};
}

}  // namespace

PdfDocument::PdfDocument(std::string name, RenderOptions options)
    : name_(std::move(name)), options_(std::move(options)) {}

PdfDocument::~PdfDocument() { Close(); }

Result<std::unique_ptr<PdfDocument>> PdfDocument::Open(const std::string& path,
                                                       const RenderOptions& options) {
  MINERU_RETURN_IF_ERROR(ValidateRenderOptions(options));
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) {
    return Fail(errno == ENOENT ? ErrorCode::kNotFound : ErrorCode::kIo, "{}: {}", path,
                std::strerror(errno));
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) {
    return Fail(ErrorCode::kIo, "{}: {}", path, std::strerror(errno));
  }
  if (!S_ISREG(st.st_mode)) {
    return Fail(ErrorCode::kInvalidArgument, "{}: not a regular file", path);
  }
  std::string head(kHeaderWindow, '\0');
  const ssize_t n = ::pread(fd.get(), head.data(), head.size(), 0);
  if (n < 0) return Fail(ErrorCode::kIo, "{}: {}", path, std::strerror(errno));
  head.resize(static_cast<size_t>(n));
  if (auto ok = CheckLooksLikePdf(head, st.st_size, options.limits.max_document_bytes); !ok) {
    return tl::unexpected(WithContext(ok.error(), path));
  }
  std::unique_ptr<PdfDocument> doc(new PdfDocument(path, options));
  MINERU_RETURN_IF_ERROR(doc->Start(fd.get()));
  return doc;
}

Result<std::unique_ptr<PdfDocument>> PdfDocument::OpenBytes(std::span<const uint8_t> bytes,
                                                            const std::string& name,
                                                            const RenderOptions& options) {
  MINERU_RETURN_IF_ERROR(ValidateRenderOptions(options));
  const std::string_view head(reinterpret_cast<const char*>(bytes.data()),
                              std::min(bytes.size(), kHeaderWindow));
  if (auto ok = CheckLooksLikePdf(head, static_cast<int64_t>(bytes.size()),
                                  options.limits.max_document_bytes);
      !ok) {
    return tl::unexpected(WithContext(ok.error(), name));
  }
  // An anonymous file gives the helper the same view as a real one (it maps fd 3) without a
  // trip through the file system; sealing it keeps it from changing size under the mapping.
  UniqueFd fd(::memfd_create("mineru-pdf", MFD_CLOEXEC | MFD_ALLOW_SEALING));
  if (fd.get() < 0) return Fail(ErrorCode::kIo, "{}: memfd_create: {}", name, std::strerror(errno));
  size_t written = 0;
  while (written < bytes.size()) {
    const ssize_t n = ::write(fd.get(), bytes.data() + written, bytes.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Fail(ErrorCode::kIo, "{}: writing to memfd: {}", name, std::strerror(errno));
    written += static_cast<size_t>(n);
  }
  ::fcntl(fd.get(), F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL);
  std::unique_ptr<PdfDocument> doc(new PdfDocument(name, options));
  MINERU_RETURN_IF_ERROR(doc->Start(fd.get()));
  return doc;
}

Deadline PdfDocument::NextDeadline() const {
  return std::chrono::steady_clock::now() +
         std::chrono::duration_cast<std::chrono::steady_clock::duration>(
             std::chrono::duration<double>(options_.limits.page_timeout_seconds));
}

Error PdfDocument::Prefixed(Error error) const { return WithContext(std::move(error), name_); }

Status PdfDocument::Start(int document_fd) {
  auto helper_path = ResolveHelperPath(options_);
  if (!helper_path) return tl::unexpected(Prefixed(helper_path.error()));
  auto helper = HelperProcess::Spawn(*helper_path, HelperArgs(options_), document_fd);
  if (!helper) return tl::unexpected(Prefixed(helper.error()));
  helper_ = std::move(*helper);

  const std::string step = "opening the document";
  const Deadline deadline = NextDeadline();
  if (TransferFailure f = helper_.Send(AsBytes(proto::EncodeOpen(options_.password)), deadline);
      f != TransferFailure::kNone) {
    return tl::unexpected(Abort(f, step));
  }
  proto::FrameHeader header;
  if (auto ok = ReadHeader(&header, deadline, step); !ok) {
    // The helper reported why it cannot open the document (encrypted, damaged, no pages...).
    failed_ = true;
    failure_ = ok.error();
    helper_.Stop();
    return ok;
  }
  if (header.type != proto::MessageType::kInfo) {
    return tl::unexpected(
        Abort(Error{ErrorCode::kCorrupt, fmt::format("a {} message where info was expected",
                                                     proto::MessageTypeName(header.type))},
              step));
  }
  if (header.payload_bytes > proto::MaxInfoPayload(options_.limits.max_pages)) {
    return tl::unexpected(Abort(
        Error{ErrorCode::kCorrupt, fmt::format("info of {} bytes", header.payload_bytes)}, step));
  }
  std::vector<uint8_t> payload(header.payload_bytes);
  if (TransferFailure f = helper_.Receive(payload, deadline); f != TransferFailure::kNone) {
    return tl::unexpected(Abort(f, step));
  }
  auto info = proto::DecodeInfo(payload, options_.limits.max_pages);
  if (!info) return tl::unexpected(Abort(info.error(), step));
  if (info->page_count() == 0) {
    return tl::unexpected(Abort(Error{ErrorCode::kCorrupt, "info lists no pages"}, step));
  }
  info_ = std::move(*info);
  return OkStatus();
}

Status PdfDocument::ReadHeader(proto::FrameHeader* header, Deadline deadline,
                               const std::string& step) {
  std::array<uint8_t, proto::kHeaderBytes> bytes;
  if (TransferFailure f = helper_.Receive(bytes, deadline); f != TransferFailure::kNone) {
    return tl::unexpected(Abort(f, step));
  }
  auto parsed = proto::ParseHeader(bytes);
  if (!parsed) return tl::unexpected(Abort(parsed.error(), step));
  *header = *parsed;
  if (header->type != proto::MessageType::kError) return OkStatus();
  if (header->payload_bytes > proto::MaxErrorPayload()) {
    return tl::unexpected(Abort(
        Error{ErrorCode::kCorrupt, fmt::format("error of {} bytes", header->payload_bytes)}, step));
  }
  std::vector<uint8_t> payload(header->payload_bytes);
  if (TransferFailure f = helper_.Receive(payload, deadline); f != TransferFailure::kNone) {
    return tl::unexpected(Abort(f, step));
  }
  auto reply = proto::DecodeError(payload);
  if (!reply) return tl::unexpected(Abort(reply.error(), step));
  std::string where;
  if (reply->page != proto::kNoPage) where = fmt::format("page {}: ", uint64_t{reply->page} + 1);
  return tl::unexpected(Prefixed(Error{reply->code, where + reply->message}));
}

Error PdfDocument::Abort(TransferFailure failure, const std::string& step) {
  const HelperProcess::End& end = helper_.Stop();
  const int signal = end.signal;
  Error error;
  if (failure == TransferFailure::kTimeout) {
    error = Error{ErrorCode::kResourceExhausted,
                  fmt::format("{}: no reply from the render helper within {} s (--page-timeout); "
                              "the helper was killed",
                              step, options_.limits.page_timeout_seconds)};
  } else if (signal == SIGXCPU) {
    error = Error{ErrorCode::kResourceExhausted,
                  fmt::format("{}: the render helper used more than {} s of CPU "
                              "(--page-cpu-seconds) and was stopped",
                              step, options_.limits.page_cpu_seconds)};
  } else if (end.status == proto::kExitNoMemory) {
    error = Error{ErrorCode::kResourceExhausted,
                  fmt::format("{}: the render helper ran out of memory (--helper-memory {})", step,
                              options_.limits.helper_memory_bytes)};
  } else if (failure == TransferFailure::kSystem) {
    error = Error{ErrorCode::kIo, fmt::format("{}: talking to the render helper: {}", step,
                                              std::strerror(helper_.last_errno()))};
  } else {
    std::string hint;
    if (signal == SIGABRT) {
      hint = fmt::format(" (Poppler aborts when memory runs out: --helper-memory is {})",
                         options_.limits.helper_memory_bytes);
    }
    error = Error{
        ErrorCode::kUnavailable,
        fmt::format("{}: the render helper stopped unexpectedly: it {}{}", step, end.what, hint)};
  }
  failed_ = true;
  failure_ = Prefixed(std::move(error));
  return failure_;
}

Error PdfDocument::Abort(const Error& garbled, const std::string& step) {
  helper_.Stop();
  failed_ = true;
  failure_ = Prefixed(Error{ErrorCode::kUnavailable,
                            fmt::format("{}: the render helper sent a malformed reply ({}); the "
                                        "helper was killed",
                                        step, garbled.message)});
  return failure_;
}

void PdfDocument::Close() {
  if (helper_.running()) {
    // Best effort (16 bytes into an idle socket's buffer): the helper exits on kClose, and
    // Stop() kills it whatever it does.
    helper_.Send(AsBytes(proto::EncodeClose()),
                 std::chrono::steady_clock::now() + std::chrono::milliseconds(100));
    helper_.Stop();
  }
  if (!failed_) {
    failed_ = true;
    failure_ = Prefixed(Error{ErrorCode::kCancelled, "document already closed"});
  }
}

Result<PageGeometry> PdfDocument::Geometry(int index) const {
  if (index < 0 || index >= info_.page_count()) {
    return tl::unexpected(
        Prefixed(Error{ErrorCode::kInvalidArgument, fmt::format("page index {} is outside [0, {})",
                                                                index, info_.page_count())}));
  }
  auto geometry = ComputePageGeometry(info_.pages[index], options_.dpi, options_.max_long_side,
                                      options_.limits.max_page_pixels);
  if (!geometry) {
    return tl::unexpected(
        Prefixed(WithContext(geometry.error(), fmt::format("page {}", index + 1))));
  }
  return geometry;
}

Result<PageImage> PdfDocument::RenderPage(int index) {
  PageImage page;
  MINERU_RETURN_IF_ERROR(RenderPage(index, &page));
  return page;
}

Status PdfDocument::RenderPage(int index, PageImage* out) {
  if (failed_) return tl::unexpected(failure_);
  MINERU_ASSIGN_OR_RETURN(const PageGeometry geometry, Geometry(index));
  const std::string step = fmt::format("page {}", index + 1);
  const Deadline deadline = NextDeadline();
  const proto::RenderRequest request{static_cast<uint32_t>(index), geometry.scale,
                                     static_cast<uint32_t>(geometry.width),
                                     static_cast<uint32_t>(geometry.height)};
  if (TransferFailure f = helper_.Send(AsBytes(proto::EncodeRender(request)), deadline);
      f != TransferFailure::kNone) {
    return tl::unexpected(Abort(f, step));
  }
  proto::FrameHeader header;
  MINERU_RETURN_IF_ERROR(ReadHeader(&header, deadline, step));  // a page-level error, or fatal
  const uint64_t pixel_bytes = uint64_t(geometry.width) * uint64_t(geometry.height) * 3;
  if (header.type != proto::MessageType::kPage) {
    return tl::unexpected(
        Abort(Error{ErrorCode::kCorrupt, fmt::format("a {} message where a page was expected",
                                                     proto::MessageTypeName(header.type))},
              step));
  }
  if (header.payload_bytes != proto::kPageHeaderBytes + pixel_bytes) {
    return tl::unexpected(Abort(
        Error{ErrorCode::kCorrupt,
              fmt::format("a page of {} bytes where {} x {} needs {}", header.payload_bytes,
                          geometry.width, geometry.height, proto::kPageHeaderBytes + pixel_bytes)},
        step));
  }
  std::array<uint8_t, proto::kPageHeaderBytes> page_header_bytes;
  if (TransferFailure f = helper_.Receive(page_header_bytes, deadline);
      f != TransferFailure::kNone) {
    return tl::unexpected(Abort(f, step));
  }
  auto page_header = proto::DecodePageHeader(page_header_bytes);
  if (!page_header) return tl::unexpected(Abort(page_header.error(), step));
  if (page_header->index != request.index || page_header->width != request.width ||
      page_header->height != request.height || page_header->scale != request.scale) {
    return tl::unexpected(Abort(
        Error{ErrorCode::kCorrupt,
              fmt::format("page {} at {} x {} (scale {}) where page {} at {} x {} (scale {}) was "
                          "asked for",
                          uint64_t{page_header->index} + 1, page_header->width, page_header->height,
                          page_header->scale, index + 1, geometry.width, geometry.height,
                          geometry.scale)},
        step));
  }
  try {
    out->image.pixels.resize(pixel_bytes);
  } catch (const std::bad_alloc&) {
    helper_.Stop();
    failed_ = true;
    failure_ = Prefixed(Error{
        ErrorCode::kResourceExhausted,
        fmt::format("{}: no memory for a {} x {} page", step, geometry.width, geometry.height)});
    return tl::unexpected(failure_);
  }
  if (TransferFailure f = helper_.Receive(out->image.pixels, deadline);
      f != TransferFailure::kNone) {
    return tl::unexpected(Abort(f, step));
  }
  out->index = index;
  out->info = info_.pages[index];
  out->geometry = geometry;
  out->image.width = geometry.width;
  out->image.height = geometry.height;
  return OkStatus();
}

Status RenderPages(PdfDocument& document, const std::vector<int>& pages,
                   const std::function<Status(const PageImage&)>& on_page) {
  PageImage page;  // one buffer for the whole document
  for (int index : pages) {
    MINERU_RETURN_IF_ERROR(document.RenderPage(index, &page));
    MINERU_RETURN_IF_ERROR(on_page(page));
  }
  return OkStatus();
}

}  // namespace mineru::pdf
