// SPDX-License-Identifier: Apache-2.0
// PDFs of many small pages for the long-document and soak tests, written by hand (one content
// stream per page, a classic cross-reference table): a 5,000-page document is about 1 MB and
// opens in the render helper in well under a second.
#pragma once

#include <string>
#include <vector>

namespace mineru::apps::testing {

enum class PageLook {
  kSame,      // every page the same picture (answered once by a block cache)
  kDistinct,  // no two pages alike (up to 1,024 positions x 64 colours of one square)
};

// A PDF of `objects` (object i + 1 is objects[i]; object 1 the catalog) with a classic
// cross-reference table.
inline std::string AssemblePdf(const std::vector<std::string>& objects) {
  std::string pdf = "%PDF-1.7\n";
  std::vector<size_t> offsets;
  for (size_t i = 0; i < objects.size(); ++i) {
    offsets.push_back(pdf.size());
    pdf += std::to_string(i + 1) + " 0 obj\n" + objects[i] + "\nendobj\n";
  }
  const size_t xref = pdf.size();
  pdf += "xref\n0 " + std::to_string(objects.size() + 1) + "\n0000000000 65535 f \n";
  for (size_t offset : offsets) {
    const std::string number = std::to_string(offset);
    pdf += std::string(10 - number.size(), '0') + number + " 00000 n \n";
  }
  pdf += "trailer\n<< /Size " + std::to_string(objects.size() + 1) +
         " /Root 1 0 R >>\nstartxref\n" + std::to_string(xref) + "\n%%EOF\n";
  return pdf;
}

// A PDF of `pages` square pages of `points` x `points` pt (72 pt: 200 x 200 pixels at MinerU's
// 200 DPI), each with one filled square. `variant` changes every page's colour, so that two
// documents of one shape are different bytes (and different pictures).
inline std::string LongPdf(int pages, PageLook look, int variant = 0, int points = 72) {
  std::vector<std::string> objects = {"<< /Type /Catalog /Pages 2 0 R >>", ""};
  std::string kids;
  for (int i = 0; i < pages; ++i) {
    const int n = look == PageLook::kDistinct ? i : 0;
    const int colour = (n / 1024 + variant) % 64;
    const std::string content =
        std::to_string(colour / 16 / 4.0) + " " + std::to_string(colour / 4 % 4 / 4.0) + " " +
        std::to_string(colour % 4 / 4.0) + " rg " + std::to_string(4 + n % 32) + " " +
        std::to_string(4 + n / 32 % 32) + " 16 16 re f";
    kids += std::to_string(objects.size() + 1) + " 0 R ";
    objects.push_back("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 " + std::to_string(points) +
                      " " + std::to_string(points) + "] /Contents " +
                      std::to_string(objects.size() + 2) + " 0 R >>");
    objects.push_back("<< /Length " + std::to_string(content.size()) + " >>\nstream\n" + content +
                      "\nendstream");
  }
  objects[1] = "<< /Type /Pages /Kids [" + kids + "] /Count " + std::to_string(pages) + " >>";
  return AssemblePdf(objects);
}

}  // namespace mineru::apps::testing
