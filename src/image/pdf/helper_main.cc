// SPDX-License-Identifier: Apache-2.0
// mineru-pdf-render: the render helper. It parses one untrusted PDF (descriptor 3) with Poppler
// and renders the pages its client asks for, one at a time, answering over stdin/stdout in the
// protocol of protocol.h; on request it also writes <stem>_layout.pdf (the document's pages with
// MinerU's layout boxes drawn over them) and streams it back. It is started and killed by
// PdfDocument; it is not meant to be run by hand. Before it reads any input it limits itself:
// address space (RLIMIT_AS), CPU seconds per step (RLIMIT_CPU, raised before each page, rendered or
// laid out), no core files. Whatever it does wrong, it can only fail its own document.
//
// Usage: mineru-pdf-render --max-pages N --max-page-pixels N --max-document-bytes N
//                          --page-cpu-seconds N --helper-memory BYTES
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <vector>

#include "image/pdf/poppler_document.h"
#include "image/pdf/poppler_layout.h"
#include "image/pdf/protocol.h"
#include "image/pdf/render_options.h"

namespace mineru::pdf {
namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kAddressSanitizer = true;
#else
constexpr bool kAddressSanitizer = false;
#endif

namespace proto = protocol;

constexpr int kDocumentFd = 3;
using proto::kExitNoMemory;
using proto::kExitProtocol;
using proto::kExitUsage;
using proto::kExitWrite;

struct HelperLimits {
  int64_t max_pages = kDefaultMaxPages;
  int64_t max_page_pixels = kDefaultMaxPagePixels;
  int64_t max_document_bytes = kDefaultMaxDocumentBytes;
  int64_t page_cpu_seconds = kDefaultPageCpuSeconds;
  int64_t helper_memory = kDefaultHelperMemoryBytes;
};

bool ParseArgs(int argc, char** argv, HelperLimits* limits) {
  for (int i = 1; i < argc; i += 2) {
    const std::string_view name = argv[i];
    if (i + 1 >= argc) return false;
    const std::string_view text = argv[i + 1];
    int64_t value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size() || value < 0) return false;
    if (name == "--max-pages") {
      limits->max_pages = value;
    } else if (name == "--max-page-pixels") {
      limits->max_page_pixels = value;
    } else if (name == "--max-document-bytes") {
      limits->max_document_bytes = value;
    } else if (name == "--page-cpu-seconds") {
      limits->page_cpu_seconds = value;
    } else if (name == "--helper-memory") {
      limits->helper_memory = value;
    } else {
      return false;
    }
  }
  return limits->max_pages >= 1 && limits->max_pages <= kMaxPagesCeiling &&
         limits->max_page_pixels >= 1 && limits->max_page_pixels <= kMaxPagePixelsCeiling &&
         limits->max_document_bytes >= 1 &&
         limits->max_document_bytes <= kMaxDocumentBytesCeiling && limits->page_cpu_seconds >= 1;
}

// Lets the process use `seconds` more CPU seconds from now; past them the kernel sends SIGXCPU,
// which ends the helper.
void GrantCpuSeconds(int64_t seconds) {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  const int64_t used = usage.ru_utime.tv_sec + usage.ru_stime.tv_sec + 1;
  rlimit cpu{};
  ::getrlimit(RLIMIT_CPU, &cpu);
  cpu.rlim_cur = static_cast<rlim_t>(used + seconds);
  if (cpu.rlim_max != RLIM_INFINITY && cpu.rlim_cur > cpu.rlim_max) cpu.rlim_cur = cpu.rlim_max;
  ::setrlimit(RLIMIT_CPU, &cpu);
}

void LimitProcess(const HelperLimits& limits) {
  const rlimit zero{0, 0};
  // A crash on a hostile PDF leaves no core file behind. (File writes cannot be forbidden with
  // RLIMIT_FSIZE: fontconfig, under Poppler, writes its font cache.)
  ::setrlimit(RLIMIT_CORE, &zero);
  // AddressSanitizer reserves terabytes of address space for its shadow memory, so an address
  // space limit cannot apply to a sanitizer build of the helper (the time limits still do).
  if (limits.helper_memory > 0 && !kAddressSanitizer) {
    const rlimit memory{static_cast<rlim_t>(limits.helper_memory),
                        static_cast<rlim_t>(limits.helper_memory)};
    ::setrlimit(RLIMIT_AS, &memory);
  }
  GrantCpuSeconds(limits.page_cpu_seconds);
}

// Blocking I/O on stdin/stdout. The client enforces time limits, so none are needed here.
bool ReadExact(void* out, size_t n) {
  auto* p = static_cast<uint8_t*>(out);
  while (n > 0) {
    const ssize_t got = ::read(STDIN_FILENO, p, n);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    p += got;
    n -= static_cast<size_t>(got);
  }
  return true;
}

// Buffers the output so that a page goes out in large writes rather than one per row.
class Output {
 public:
  Output() { buffer_.reserve(kCapacity); }
  void Append(std::string_view bytes) {
    if (buffer_.size() + bytes.size() > kCapacity) Flush();
    if (bytes.size() >= kCapacity) {
      WriteAll(bytes);
    } else {
      buffer_.append(bytes);
    }
  }
  void Flush() {
    WriteAll(buffer_);
    buffer_.clear();
  }

 private:
  static constexpr size_t kCapacity = 1 << 20;
  static void WriteAll(std::string_view bytes) {
    while (!bytes.empty()) {
      const ssize_t n = ::write(STDOUT_FILENO, bytes.data(), bytes.size());
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) std::_Exit(kExitWrite);  // the client is gone; nobody to tell
      bytes.remove_prefix(static_cast<size_t>(n));
    }
  }
  std::string buffer_;
};

void SendError(Output& out, const Error& error, uint32_t page) {
  out.Append(proto::EncodeError({error.code, page, error.message}));
  out.Flush();
}

// Reads one whole frame of an expected type; a client that breaks the protocol gets no answer.
bool ReadFrame(proto::FrameHeader* header, std::vector<uint8_t>* payload) {
  std::array<uint8_t, proto::kHeaderBytes> bytes;
  if (!ReadExact(bytes.data(), bytes.size())) return false;
  auto parsed = proto::ParseHeader(bytes);
  if (!parsed) std::_Exit(kExitProtocol);
  uint64_t max = proto::kRenderBytes;
  if (parsed->type == proto::MessageType::kOpen) max = proto::MaxOpenPayload(kMaxPasswordBytes);
  if (parsed->type == proto::MessageType::kLayoutPage) max = proto::MaxLayoutPagePayload();
  if (parsed->payload_bytes > max) std::_Exit(kExitProtocol);
  *header = *parsed;
  payload->resize(parsed->payload_bytes);
  return ReadExact(payload->data(), payload->size());
}

#ifdef MINERU_PDF_TEST_HOOKS
// Test hook (docs/PDF.md): MINERU_PDF_RENDER_TEST_FAULT=KIND:PAGE makes the helper misbehave
// when asked for PAGE (1-based; 0: while opening the document): crash (SIGSEGV), hang (sleeps),
// spin (burns CPU), exit (ends silently), garbage (sends bytes that are not a frame), badsize
// (announces a page one pixel wider than asked), alloc (asks for 8 GiB, over the default
// address-space limit). Also when asked to lay out PAGE for the layout PDF. Compiled in only
// when the tests are built.
void MaybeFault(int page_number, Output& out, const proto::RenderRequest* request) {
  const char* env = std::getenv("MINERU_PDF_RENDER_TEST_FAULT");
  if (env == nullptr) return;
  const std::string_view spec = env;
  const size_t colon = spec.find(':');
  if (colon == std::string_view::npos) return;
  if (std::atoi(std::string(spec.substr(colon + 1)).c_str()) != page_number) return;
  const std::string_view kind = spec.substr(0, colon);
  if (kind == "crash") {
    ::raise(SIGSEGV);
  } else if (kind == "hang") {
    for (;;) ::pause();
  } else if (kind == "spin") {
    [[maybe_unused]] volatile uint64_t sink = 0;
    for (uint64_t i = 0;; ++i) sink = i;
  } else if (kind == "exit") {
    std::_Exit(0);
  } else if (kind == "alloc") {
    // Stored through a volatile pointer so that the allocation cannot be optimised away.
    static void* volatile big;
    big = std::malloc(size_t{8} << 30);
    if (big == nullptr) throw std::bad_alloc();
    std::free(big);
  } else if (kind == "garbage") {
    out.Append("this is not a frame header, just text");
    out.Flush();
    for (;;) ::pause();
  } else if (kind == "badsize" && request != nullptr) {
    out.Append(proto::EncodePageHeader(
        {request->index, request->width + 1, request->height, request->scale}));
    out.Flush();
    for (;;) ::pause();
  }
}
#else
void MaybeFault(int, Output&, const proto::RenderRequest*) {}
#endif

// The layout PDF on its way out: cairo's bytes are cut into kLayoutData frames of at most
// kMaxLayoutChunkBytes, so that memory stays bounded whatever the size of the PDF.
class LayoutStream {
 public:
  explicit LayoutStream(Output& out) : out_(out) {}
  void Append(std::string_view bytes) {
    while (!bytes.empty()) {
      const size_t take = std::min(bytes.size(), proto::kMaxLayoutChunkBytes - pending_.size());
      pending_.append(bytes.substr(0, take));
      bytes.remove_prefix(take);
      if (pending_.size() == proto::kMaxLayoutChunkBytes) Flush();
    }
  }
  void Flush() {
    if (pending_.empty()) return;
    out_.Append(proto::EncodeLayoutDataHeader(pending_.size()));
    out_.Append(pending_);
    pending_.clear();
  }
  void Drop() { pending_.clear(); }

 private:
  Output& out_;
  std::string pending_;
};

// Answers kLayoutPage: draws the page into the layout PDF (starting one when the request says
// so), sends what cairo wrote and kLayoutDone, or kError (the layout PDF is then dropped).
void ServeLayoutPage(const proto::LayoutPageRequest& request, std::span<const uint8_t> bytes,
                     const std::string& password, Output& out, LayoutStream& stream,
                     std::unique_ptr<PopplerLayoutWriter>& writer) {
  const auto index = static_cast<uint32_t>(request.page.page_index);
  if (writer == nullptr) {
    auto loaded = PopplerLayoutWriter::Load(bytes, password);
    if (!loaded) {
      SendError(out, WithContext(loaded.error(), "layout PDF"), index);
      return;
    }
    writer = std::move(*loaded);
  }
  if ((request.flags & proto::kLayoutFirstPage) != 0) {
    stream.Drop();
    writer->Begin([&stream](std::string_view b) { stream.Append(b); });
  } else if (!writer->started()) {
    SendError(out, Error{ErrorCode::kInvalidArgument, "no layout PDF in progress"}, index);
    return;
  }
  bool numbers_skipped = false;
  PopplerDocument::ClearLastPopplerMessage();
  if (Status added = writer->AddPage(request.page, &numbers_skipped); !added) {
    stream.Drop();
    Error error = added.error();
    error.message = "layout PDF: " + error.message;
    if (const std::string poppler = PopplerDocument::LastPopplerMessage(); !poppler.empty()) {
      error.message += " (Poppler: " + poppler + ")";
    }
    SendError(out, error, index);
    return;
  }
  stream.Flush();
  out.Append(proto::EncodeLayoutDone({index, numbers_skipped ? proto::kLayoutNumbersSkipped : 0u}));
  out.Flush();
}

// Answers kLayoutFinish: the rest of the layout PDF, then kLayoutDone (or kError).
void ServeLayoutFinish(Output& out, LayoutStream& stream, PopplerLayoutWriter& writer) {
  if (Status finished = writer.Finish(); !finished) {
    stream.Drop();
    SendError(out, WithContext(finished.error(), "layout PDF"), proto::kNoPage);
    return;
  }
  stream.Flush();
  out.Append(proto::EncodeLayoutDone({proto::kNoPage, 0}));
  out.Flush();
}

int Serve(const HelperLimits& limits) {
  Output out;
  proto::FrameHeader header;
  std::vector<uint8_t> payload;
  if (!ReadFrame(&header, &payload)) return 0;
  if (header.type != proto::MessageType::kOpen) return kExitProtocol;
  auto password = proto::DecodeOpen(payload);
  if (!password || password->size() > kMaxPasswordBytes) return kExitProtocol;
  MaybeFault(0, out, nullptr);

  struct stat st {};
  if (::fstat(kDocumentFd, &st) != 0 || st.st_size <= 0) {
    SendError(out, Error{ErrorCode::kIo, "the render helper got no document"}, proto::kNoPage);
    return 0;
  }
  if (st.st_size > limits.max_document_bytes) {
    SendError(
        out,
        Error{ErrorCode::kResourceExhausted, fmt::format("{} bytes exceed --max-document-bytes {}",
                                                         st.st_size, limits.max_document_bytes)},
        proto::kNoPage);
    return 0;
  }
  void* map =
      ::mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, kDocumentFd, 0);
  if (map == MAP_FAILED) {
    SendError(out,
              Error{errno == ENOMEM ? ErrorCode::kResourceExhausted : ErrorCode::kIo,
                    fmt::format("cannot map the document: {} (--helper-memory {})",
                                std::strerror(errno), limits.helper_memory)},
              proto::kNoPage);
    return 0;
  }
  const std::span<const uint8_t> bytes(static_cast<const uint8_t*>(map),
                                       static_cast<size_t>(st.st_size));

  PopplerDocument::CaptureMessages();
  auto doc = PopplerDocument::Load(bytes, *password, static_cast<int>(limits.max_pages));
  if (!doc) {
    SendError(out, doc.error(), proto::kNoPage);
    return 0;
  }
  auto info = (*doc)->Info();
  if (!info) {
    SendError(out, info.error(), proto::kNoPage);
    return 0;
  }
  out.Append(proto::EncodeInfo(*info));
  out.Flush();

  LayoutStream layout_stream(out);
  std::unique_ptr<PopplerLayoutWriter> layout;  // loaded at the first layout page
  for (;;) {
    if (!ReadFrame(&header, &payload)) return 0;  // the client closed its end
    if (header.type == proto::MessageType::kClose) return 0;
    if (header.type == proto::MessageType::kLayoutPage) {
      auto request = proto::DecodeLayoutPage(payload);
      if (!request || static_cast<size_t>(request->page.page_index) >= info->pages.size()) {
        return kExitProtocol;
      }
      GrantCpuSeconds(limits.page_cpu_seconds);
      MaybeFault(request->page.page_index + 1, out, nullptr);
      ServeLayoutPage(*request, bytes, *password, out, layout_stream, layout);
      continue;
    }
    if (header.type == proto::MessageType::kLayoutFinish) {
      if (!payload.empty() || layout == nullptr || !layout->started()) return kExitProtocol;
      GrantCpuSeconds(limits.page_cpu_seconds);
      ServeLayoutFinish(out, layout_stream, *layout);
      continue;
    }
    if (header.type != proto::MessageType::kRender) return kExitProtocol;
    auto request = proto::DecodeRender(payload);
    if (!request) return kExitProtocol;
    const uint32_t index = request->index;
    const uint64_t pixels = uint64_t{request->width} * request->height;
    if (index >= info->pages.size() || request->width == 0 || request->height == 0 ||
        request->width > static_cast<uint32_t>(kMaxLongSideCeiling) + 1 ||
        request->height > static_cast<uint32_t>(kMaxLongSideCeiling) + 1) {
      return kExitProtocol;
    }
    if (pixels > static_cast<uint64_t>(limits.max_page_pixels)) {
      SendError(out,
                Error{ErrorCode::kResourceExhausted,
                      fmt::format("{} x {} pixels exceed --max-page-pixels {}", request->width,
                                  request->height, limits.max_page_pixels)},
                index);
      continue;
    }
    GrantCpuSeconds(limits.page_cpu_seconds);
    MaybeFault(static_cast<int>(index) + 1, out, &*request);
    // Rows go out straight from Poppler's bitmap behind a header announcing the exact size; once
    // that header is out, a failure can only be reported by ending the process (the row sink
    // cannot fail today, so this does not happen).
    bool started = false;
    Status rendered = (*doc)->Render(
        static_cast<int>(index), request->scale, static_cast<int>(request->width),
        static_cast<int>(request->height), [&](std::span<const uint8_t> row) -> Status {
          if (!started) {
            out.Append(
                proto::EncodePageHeader({index, request->width, request->height, request->scale}));
            started = true;
          }
          out.Append({reinterpret_cast<const char*>(row.data()), row.size()});
          return OkStatus();
        });
    if (!rendered) {
      if (started) std::_Exit(kExitProtocol);
      Error error = rendered.error();
      if (error.code == ErrorCode::kResourceExhausted) {
        error.message += fmt::format(" (--helper-memory {})", limits.helper_memory);
      }
      SendError(out, error, index);
      continue;
    }
    out.Flush();
  }
}

}  // namespace
}  // namespace mineru::pdf

int main(int argc, char** argv) {
  using namespace mineru::pdf;
  HelperLimits limits;
  if (!ParseArgs(argc, argv, &limits)) {
    std::fprintf(stderr,
                 "usage: %s --max-pages N --max-page-pixels N --max-document-bytes N "
                 "--page-cpu-seconds N --helper-memory BYTES\n"
                 "(the render helper of mineru-cpp; it speaks a binary protocol on stdin/stdout "
                 "and is not meant to be run by hand)\n",
                 argv[0]);
    return kExitUsage;
  }
  LimitProcess(limits);
  try {
    return Serve(limits);
  } catch (const std::bad_alloc&) {
    // Nothing can be sent reliably without memory; the client reports the exit status.
    std::_Exit(kExitNoMemory);
  }
}
