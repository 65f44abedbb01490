// SPDX-License-Identifier: Apache-2.0
// A PDF opened in its own render helper process (mineru-pdf-render, which links Poppler):
// pages are rendered one at a time, on request, so memory is bounded by the page in flight and
// not by the length of the document.
//
//   MINERU_ASSIGN_OR_RETURN(auto doc, PdfDocument::Open("paper.pdf", options));
//   for (int i = 0; i < doc->info().page_count(); ++i) {
//     MINERU_ASSIGN_OR_RETURN(PageImage page, doc->RenderPage(i));
//     ...  // page.image (image::RgbImage), page.width(), page.height(), page.scale()
//   }
//
// One helper per document: a crash, a hang or garbage from the helper (a hostile PDF, a Poppler
// bug) becomes an Error for this document only; the helper is then killed and reaped and the
// caller carries on with the next document. Errors name the document and the page (1-based, as
// people count pages). Not thread-safe; different documents may be used from different threads.
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "base/status.h"
#include "image/pdf/helper_process.h"
#include "image/pdf/layout_plan.h"
#include "image/pdf/page_image.h"
#include "image/pdf/protocol.h"
#include "image/pdf/render_options.h"

namespace mineru::pdf {

class PdfDocument {
 public:
  // Opens a PDF file; `name` in messages is the path.
  static Result<std::unique_ptr<PdfDocument>> Open(const std::string& path,
                                                   const RenderOptions& options);
  // Opens a PDF held in memory (an upload); the bytes are copied into an anonymous file that the
  // helper maps, so the caller may free them once this returns.
  static Result<std::unique_ptr<PdfDocument>> OpenBytes(std::span<const uint8_t> bytes,
                                                        const std::string& name,
                                                        const RenderOptions& options);

  ~PdfDocument();
  PdfDocument(const PdfDocument&) = delete;
  PdfDocument& operator=(const PdfDocument&) = delete;

  const std::string& name() const { return name_; }
  const DocumentInfo& info() const { return info_; }
  const RenderOptions& options() const { return options_; }

  // The size page `index` (0-based) renders at, without rendering it.
  Result<PageGeometry> Geometry(int index) const;

  // Renders one page (0-based index). An error the helper reports for a page (say, Poppler
  // cannot draw it) leaves the document usable for other pages; a failure of the helper itself
  // (timeout, crash, malformed reply) ends it, and every later call repeats that error.
  Result<PageImage> RenderPage(int index);
  // The same, reusing out->image's storage.
  Status RenderPage(int index, PageImage* out);

  // Writes <stem>_layout.pdf to `path` (atomically: a reader sees no file or the whole file):
  // for each page of `plan`, in order, this document's page plan.page_index as the helper's
  // Poppler draws it onto a PDF page of the same displayed size (vector: text stays text), with
  // the plan's boxes and numbers over it. The PDF is made in the helper, under the same limits
  // as rendering (each page, and the final step, gets --page-timeout and --page-cpu-seconds),
  // and streamed back; it may not exceed --max-document-bytes. A page the helper cannot draw
  // (a damaged page, an unusable page box) fails this call only, with the page named; a
  // failure of the helper itself (timeout, crash, malformed reply, the size limit) ends the
  // document, as in RenderPage. A missing font skips the numbers with a warning in the report.
  Result<LayoutPdfReport> WriteLayoutPdf(const LayoutPlan& plan, const std::string& path);

  // Ends the helper now (the destructor does it too).
  void Close();

 private:
  struct LayoutSink;
  // Reads the helper's answer to one layout step: kLayoutData frames into `sink`, then
  // kLayoutDone for `expected_page`.
  Status ReceiveLayoutStep(uint32_t expected_page, const std::string& step, Deadline deadline,
                           LayoutSink& sink);
  PdfDocument(std::string name, RenderOptions options);
  Status Start(int document_fd);
  // Reads the next frame header; kError frames are decoded and returned as errors.
  Status ReadHeader(protocol::FrameHeader* header, Deadline deadline, const std::string& step);
  // Kills the helper and turns a transfer failure during `step` into this document's final error.
  Error Abort(TransferFailure failure, const std::string& step);
  Error Abort(const Error& garbled, const std::string& step);
  Error Prefixed(Error error) const;
  Deadline NextDeadline() const;

  std::string name_;
  RenderOptions options_;
  HelperProcess helper_;
  DocumentInfo info_;
  bool failed_ = false;
  Error failure_;
};

// Renders `pages` (0-based indices) of `document` in order, handing each page to `on_page` as
// soon as it is ready; the next page is rendered only after on_page returns. Stops at the first
// error, from rendering or from on_page.
Status RenderPages(PdfDocument& document, const std::vector<int>& pages,
                   const std::function<Status(const PageImage&)>& on_page);

}  // namespace mineru::pdf
