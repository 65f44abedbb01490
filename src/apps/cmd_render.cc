// SPDX-License-Identifier: Apache-2.0
// mineru-cpp render PDF -o OUT/: the page images MinerU's pipeline would see (200 DPI, longer
// side capped at 3500 px), one file per page, plus pages.json with each page's size in points,
// rotation, scale and pixel size. Pages are rendered by the mineru-pdf-render helper process,
// one at a time, and written as they arrive.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "apps/commands.h"
#include "base/json.h"
#include "base/mapped_file.h"
#include "image/pdf/page_png.h"
#include "image/pdf/page_selection.h"
#include "image/pdf/pdf_document.h"

namespace mineru::apps {
namespace {

struct RenderArgs {
  std::string input;
  std::string out;
  std::string pages;
  std::string format = "png";
  pdf::RenderOptions options;
};

std::span<const uint8_t> AsBytes(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

int RunRender(const RenderArgs& args) {
  const auto start = std::chrono::steady_clock::now();
  auto spans = pdf::ParsePageList(args.pages);  // checked by the flag's validator already
  if (!spans) return ReportError(spans.error());
  std::error_code ec;
  std::filesystem::create_directories(args.out, ec);
  if (ec) {
    return ReportError(Error{ErrorCode::kIo, fmt::format("{}: {}", args.out, ec.message())});
  }
  auto doc = pdf::PdfDocument::Open(args.input, args.options);
  if (!doc) return ReportError(doc.error());
  auto pages = pdf::SelectPages(*spans, (*doc)->info().page_count());
  if (!pages) return ReportError(WithContext(pages.error(), args.input));

  Json page_list = Json::array();
  const Status rendered =
      pdf::RenderPages(**doc, *pages, [&](const pdf::PageImage& page) -> Status {
        const std::string file = fmt::format("page_{:04d}.{}", page.index + 1, args.format);
        const std::string path = (std::filesystem::path(args.out) / file).string();
        MINERU_RETURN_IF_ERROR(args.format == "png" ? pdf::WritePagePng(page, path)
                                                    : pdf::WritePagePpm(page, path));
        page_list.push_back({{"page", page.index + 1},
                             {"width_pt", page.info.width_pt},
                             {"height_pt", page.info.height_pt},
                             {"rotation", page.info.rotation},
                             {"scale", page.scale()},
                             {"width", page.width()},
                             {"height", page.height()},
                             {"file", file}});
        return OkStatus();
      });
  if (!rendered) return ReportError(rendered.error());
  (*doc)->Close();

  const Json summary{{"document", args.input},
                     {"page_count", (*doc)->info().page_count()},
                     {"dpi", args.options.dpi},
                     {"max_long_side", args.options.max_long_side},
                     {"pages", page_list}};
  const std::string json_path = (std::filesystem::path(args.out) / "pages.json").string();
  if (Status s = WriteFileAtomically(json_path, AsBytes(summary.dump(2) + "\n")); !s) {
    return ReportError(s.error());
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("%s: %zu of %d pages rendered to %s in %.2f s (%.1f pages/s)\n", args.input.c_str(),
              pages->size(), (*doc)->info().page_count(), args.out.c_str(), seconds,
              seconds > 0 ? static_cast<double>(pages->size()) / seconds : 0.0);
  return 0;
}

// The renderer's options and limits as flags (docs/LIMITS.md lists the limits).
void AddRenderFlags(CLI::App& cmd, pdf::RenderOptions& o) {
  cmd.add_option("--dpi", o.dpi, "Resolution before the long-side cap (MinerU: 200)")
      ->check(CLI::Range(pdf::kMinDpi, pdf::kMaxDpi))
      ->capture_default_str();
  cmd.add_option("--max-long-side", o.max_long_side,
                 "Cap on the longer side of a page image, in pixels (MinerU: 3500)")
      ->check(CLI::Range(1, pdf::kMaxLongSideCeiling))
      ->capture_default_str();
  cmd.add_option("--password", o.password, "Password of an encrypted PDF (user or owner)");
  cmd.add_option("--helper", o.helper_path,
                 std::string("The mineru-pdf-render executable (default: $") + pdf::kHelperEnvVar +
                     ", else the one next to mineru-cpp)");
  pdf::RenderLimits& l = o.limits;
  cmd.add_option("--max-pages", l.max_pages, "Most pages a document may have")
      ->check(CLI::Range(1, pdf::kMaxPagesCeiling))
      ->capture_default_str();
  cmd.add_option("--max-page-pixels", l.max_page_pixels, "Most pixels in one page image")
      ->check(CLI::Range(int64_t{1}, pdf::kMaxPagePixelsCeiling))
      ->capture_default_str();
  cmd.add_option("--max-document-bytes", l.max_document_bytes, "Largest PDF accepted, in bytes")
      ->check(CLI::Range(int64_t{1}, pdf::kMaxDocumentBytesCeiling))
      ->capture_default_str();
  cmd.add_option("--page-timeout", l.page_timeout_seconds,
                 "Wall-clock seconds for opening the document and again for each page; the "
                 "helper is killed when they run out")
      ->check(CLI::Range(0.001, 86400.0))
      ->capture_default_str();
  cmd.add_option("--page-cpu-seconds", l.page_cpu_seconds,
                 "CPU seconds the helper may spend opening the document and again on each page")
      ->check(CLI::Range(1, 1 << 20))
      ->capture_default_str();
  cmd.add_option("--helper-memory", l.helper_memory_bytes,
                 "Address-space limit of the helper in bytes (RLIMIT_AS); 0 = none")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 50))
      ->capture_default_str();
}

}  // namespace

void AddRenderCommand(CLI::App& app, const GlobalOptions& global, int* exit_code) {
  auto* cmd = app.add_subcommand(
      "render", "Render PDF pages as MinerU sees them (200 DPI, long side <= 3500 px) to images");
  auto args = std::make_shared<RenderArgs>();
  cmd->add_option("pdf", args->input, "The PDF file")->required();
  cmd->add_option("-o,--output", args->out, "Output directory (created if missing)")->required();
  cmd->add_option("--pages", args->pages, "Pages to render, counted from 1: 1-3,7,10- (all)")
      ->check(CLI::Validator(
          [](std::string& spec) {
            auto spans = pdf::ParsePageList(spec);
            return spans ? std::string() : spans.error().message;
          },
          "PAGES"));
  cmd->add_option("--format", args->format, "png, or ppm (binary PPM, as pdftoppm writes)")
      ->check(CLI::IsMember({"png", "ppm"}))
      ->capture_default_str();
  AddRenderFlags(*cmd, args->options);
  cmd->callback([=] { *exit_code = RunRender(*args); });
}

}  // namespace mineru::apps
