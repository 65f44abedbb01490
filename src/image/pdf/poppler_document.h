// SPDX-License-Identifier: Apache-2.0
// The render helper's view of Poppler (poppler-cpp): open a PDF held in memory, list its pages
// as MinerU sees them, draw one page into RGB rows. Linked only into mineru-pdf-render, the one
// program that carries Poppler's GPL (docs/PDF.md, "Licence").
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>

#include "base/status.h"
#include "image/pdf/page_image.h"

namespace poppler {
class document;
}  // namespace poppler

namespace mineru::pdf {

class PopplerDocument {
 public:
  // Routes Poppler's error messages into a buffer that LastPopplerMessage() reads, instead of
  // stderr; call once before loading.
  static void CaptureMessages();
  // The most recent message Poppler printed (for error details), or "".
  static std::string LastPopplerMessage();
  // Forgets it, before a step whose own messages are wanted.
  static void ClearLastPopplerMessage();

  // `bytes` must outlive the document (Poppler reads it in place). Errors: kCorrupt when Poppler
  // cannot parse it or it has no pages, kUnsupported when it is encrypted and the password is
  // missing or wrong, kResourceExhausted for more than max_pages pages.
  static Result<std::unique_ptr<PopplerDocument>> Load(std::span<const uint8_t> bytes,
                                                       const std::string& password, int max_pages);
  ~PopplerDocument();

  // Page sizes and rotations of every page; kCorrupt naming a page Poppler cannot load.
  Result<DocumentInfo> Info() const;

  // Draws page `index` at `scale` pixels per point into exactly width x height pixels (the top
  // left width x height of the rotated page, as pdftoppm -cropbox draws it) and hands the rows,
  // top first, to `row` (width x 3 bytes each). Antialiasing for text and vector graphics is on,
  // hinting off, paper white: pdftoppm's defaults.
  Status Render(int index, double scale, int width, int height,
                const std::function<Status(std::span<const uint8_t>)>& row) const;

 private:
  explicit PopplerDocument(poppler::document* doc) : doc_(doc) {}
  poppler::document* doc_;
};

}  // namespace mineru::pdf
