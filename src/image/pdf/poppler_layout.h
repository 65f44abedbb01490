// SPDX-License-Identifier: Apache-2.0
// The render helper's layout PDF writer: each requested page of the document is drawn by
// Poppler (poppler-glib) onto a cairo PDF surface of the page's displayed size, so that the
// original page stays vector (text stays text), then the plan's boxes and numbers on top
// (layout_draw.h). The PDF's bytes leave through a sink as cairo produces them. Linked only into
// mineru-pdf-render (docs/PDF.md, "Licence").
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "base/status.h"
#include "image/pdf/layout_plan.h"

namespace mineru::pdf {

class PopplerLayoutWriter {
 public:
  using Sink = std::function<void(std::string_view)>;

  // Parses the document a second time, with poppler-glib (the pages are rendered with
  // poppler-cpp). `bytes` must outlive the writer. kCorrupt or kUnsupported as
  // PopplerDocument::Load.
  static Result<std::unique_ptr<PopplerLayoutWriter>> Load(std::span<const uint8_t> bytes,
                                                           const std::string& password);
  ~PopplerLayoutWriter();
  PopplerLayoutWriter(const PopplerLayoutWriter&) = delete;
  PopplerLayoutWriter& operator=(const PopplerLayoutWriter&) = delete;

  // Starts a new layout PDF whose bytes go to `sink`; an unfinished one is dropped unwritten.
  void Begin(Sink sink);
  // Whether a layout PDF is in progress (Begin called, not yet finished or dropped).
  bool started() const;
  // Appends one page: the document's page `plan.page_index` with the plan drawn over it. Sets
  // *numbers_skipped when the page has numbers and no font was found. Errors (the output is
  // then dropped, and a new Begin is needed): kCorrupt for a page Poppler cannot load or whose
  // box is empty or not finite, cairo's errors.
  Status AddPage(const LayoutPagePlan& plan, bool* numbers_skipped);
  // Writes the rest of the PDF (fonts, cross-reference table) to the sink and ends it.
  Status Finish();
  // Drops the output without writing anything more.
  void Abandon();

 private:
  struct Impl;
  explicit PopplerLayoutWriter(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace mineru::pdf
