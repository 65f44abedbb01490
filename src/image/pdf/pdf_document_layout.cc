// SPDX-License-Identifier: Apache-2.0
// PdfDocument::WriteLayoutPdf: the client side of the layout messages of protocol.h.
#include <array>
#include <string>
#include <vector>

#include "base/mapped_file.h"
#include "image/pdf/pdf_document.h"
#include "image/pdf/protocol.h"

namespace mineru::pdf {
namespace {

namespace proto = protocol;

std::span<const uint8_t> AsBytes(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

}  // namespace

// Where the streamed PDF goes. A failed write does not stop the exchange: the rest of the
// step's answer is read (and dropped) so that the helper stays in step for later calls.
struct PdfDocument::LayoutSink {
  AtomicFileWriter* file = nullptr;
  Status write_status = OkStatus();
  uint64_t bytes = 0;
  bool numbers_skipped = false;
  std::vector<uint8_t> buffer;
};

Status PdfDocument::ReceiveLayoutStep(uint32_t expected_page, const std::string& step,
                                      Deadline deadline, LayoutSink& sink) {
  const uint64_t max_bytes = static_cast<uint64_t>(options_.limits.max_document_bytes);
  for (;;) {
    proto::FrameHeader header;
    MINERU_RETURN_IF_ERROR(ReadHeader(&header, deadline, step));  // the helper's error, or fatal
    if (header.type == proto::MessageType::kLayoutData) {
      if (header.payload_bytes == 0 || header.payload_bytes > proto::kMaxLayoutChunkBytes) {
        return tl::unexpected(
            Abort(Error{ErrorCode::kCorrupt,
                        fmt::format("layout data of {} bytes (1 to {} expected)",
                                    header.payload_bytes, proto::kMaxLayoutChunkBytes)},
                  step));
      }
      if (sink.bytes + header.payload_bytes > max_bytes) {
        helper_.Stop();
        failed_ = true;
        failure_ = Prefixed(Error{
            ErrorCode::kResourceExhausted,
            fmt::format("{}: the layout PDF grew past --max-document-bytes {}; the render helper "
                        "was stopped",
                        step, max_bytes)});
        return tl::unexpected(failure_);
      }
      sink.buffer.resize(header.payload_bytes);
      if (TransferFailure f = helper_.Receive(sink.buffer, deadline); f != TransferFailure::kNone) {
        return tl::unexpected(Abort(f, step));
      }
      sink.bytes += header.payload_bytes;
      if (sink.write_status) sink.write_status = sink.file->Write(sink.buffer);
      continue;
    }
    if (header.type != proto::MessageType::kLayoutDone ||
        header.payload_bytes != proto::kLayoutDoneBytes) {
      return tl::unexpected(
          Abort(Error{ErrorCode::kCorrupt,
                      fmt::format("a {} message of {} bytes where layout done was expected",
                                  proto::MessageTypeName(header.type), header.payload_bytes)},
                step));
    }
    std::array<uint8_t, proto::kLayoutDoneBytes> payload;
    if (TransferFailure f = helper_.Receive(payload, deadline); f != TransferFailure::kNone) {
      return tl::unexpected(Abort(f, step));
    }
    auto done = proto::DecodeLayoutDone(payload);
    if (!done) return tl::unexpected(Abort(done.error(), step));
    if (done->page != expected_page) {
      return tl::unexpected(
          Abort(Error{ErrorCode::kCorrupt, fmt::format("layout done for page index {}, expected {}",
                                                       done->page, expected_page)},
                step));
    }
    if ((done->flags & proto::kLayoutNumbersSkipped) != 0) sink.numbers_skipped = true;
    return OkStatus();
  }
}

Result<LayoutPdfReport> PdfDocument::WriteLayoutPdf(const LayoutPlan& plan,
                                                    const std::string& path) {
  if (failed_) return tl::unexpected(failure_);
  if (auto valid = ValidateLayoutPlan(plan, info_.page_count()); !valid) {
    return tl::unexpected(Prefixed(valid.error()));
  }
  MINERU_ASSIGN_OR_RETURN(AtomicFileWriter file, AtomicFileWriter::Create(path));
  LayoutSink sink;
  sink.file = &file;
  for (size_t k = 0; k < plan.pages.size(); ++k) {
    const LayoutPagePlan& page = plan.pages[k];
    const std::string step = fmt::format("layout PDF, page {}", page.page_index + 1);
    const Deadline deadline = NextDeadline();
    const std::string request =
        proto::EncodeLayoutPage({k == 0 ? proto::kLayoutFirstPage : 0u, page});
    if (TransferFailure f = helper_.Send(AsBytes(request), deadline); f != TransferFailure::kNone) {
      return tl::unexpected(Abort(f, step));
    }
    MINERU_RETURN_IF_ERROR(
        ReceiveLayoutStep(static_cast<uint32_t>(page.page_index), step, deadline, sink));
  }
  const std::string step = "layout PDF, finishing";
  const Deadline deadline = NextDeadline();
  if (TransferFailure f = helper_.Send(AsBytes(proto::EncodeLayoutFinish()), deadline);
      f != TransferFailure::kNone) {
    return tl::unexpected(Abort(f, step));
  }
  MINERU_RETURN_IF_ERROR(ReceiveLayoutStep(proto::kNoPage, step, deadline, sink));
  MINERU_RETURN_IF_ERROR(sink.write_status);
  MINERU_RETURN_IF_ERROR(file.Commit());
  LayoutPdfReport report;
  report.pages = static_cast<int>(plan.pages.size());
  if (sink.numbers_skipped) {
    report.warnings.push_back(
        "layout PDF: reading-order numbers not drawn: the render helper found no font "
        "(fontconfig has no \"DejaVu Sans\" nor any substitute)");
  }
  return report;
}

}  // namespace mineru::pdf
