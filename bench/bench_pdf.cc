// SPDX-License-Identifier: Apache-2.0
// PDF pages per second at MinerU's resolution (200 DPI, long side capped at 3500 px): each
// iteration opens one document in a fresh render helper and streams every page through it,
// exactly as the pipeline will. Prints pages/s and MPixel/s per document, with one helper and
// with one helper per hardware thread (documents rendered side by side).
//
//   bench_pdf [DIR] [--helper PATH] [--dpi N] [benchmark flags]
//
// DIR holds the PDFs (default: tests/data/pdf, the test fixtures, relative to the repository
// root); documents that cannot be opened (the fixtures include encrypted and broken ones) are
// listed and skipped. The helper defaults to $MINERU_PDF_RENDER_HELPER, else the one this build
// made.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "image/pdf/page_selection.h"
#include "image/pdf/pdf_document.h"

namespace mineru::pdf {
namespace {

void RenderDocument(benchmark::State& state, const std::string& path,
                    const RenderOptions& options) {
  int64_t pages = 0;
  double pixels = 0;
  for (auto _ : state) {
    auto doc = PdfDocument::Open(path, options);
    if (!doc) {
      state.SkipWithError(doc.error().ToString().c_str());
      return;
    }
    const int count = (*doc)->info().page_count();
    Status status = RenderPages(**doc, SelectPageRange(0, -1, count), [&](const PageImage& page) {
      benchmark::DoNotOptimize(page.image.pixels.data());
      ++pages;
      pixels += double(page.width()) * page.height();
      return OkStatus();
    });
    if (!status) {
      state.SkipWithError(status.error().ToString().c_str());
      return;
    }
  }
  state.counters["pages/s"] = benchmark::Counter(double(pages), benchmark::Counter::kIsRate);
  state.counters["MPixel/s"] = benchmark::Counter(pixels / 1e6, benchmark::Counter::kIsRate);
  state.counters["pages"] = benchmark::Counter(double(pages), benchmark::Counter::kAvgIterations);
}

int Main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  std::string dir = "tests/data/pdf";
  RenderOptions options;
#ifdef MINERU_PDF_RENDER_BUILD_PATH
  if (std::getenv(kHelperEnvVar) == nullptr) options.helper_path = MINERU_PDF_RENDER_BUILD_PATH;
#endif
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--helper" && i + 1 < argc) {
      options.helper_path = argv[++i];
    } else if (arg == "--dpi" && i + 1 < argc) {
      options.dpi = std::atof(argv[++i]);
    } else if (!arg.empty() && arg[0] != '-') {
      dir = arg;
    } else {
      std::fprintf(stderr, "usage: bench_pdf [DIR] [--helper PATH] [--dpi N] [benchmark flags]\n");
      return 2;
    }
  }
  std::vector<std::string> paths;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (entry.path().extension() == ".pdf") paths.push_back(entry.path().string());
  }
  if (ec || paths.empty()) {
    std::fprintf(stderr, "bench_pdf: no PDFs in %s%s%s\n", dir.c_str(), ec ? ": " : "",
                 ec ? ec.message().c_str() : "");
    return 1;
  }
  std::sort(paths.begin(), paths.end());
  const int threads = std::max(1u, std::thread::hardware_concurrency());
  std::printf("PDF rendering at %g DPI, long side <= %d px, one render helper per document\n",
              options.dpi, options.max_long_side);
  for (const std::string& path : paths) {
    auto doc = PdfDocument::Open(path, options);
    if (!doc) {
      std::printf("skipped %s\n", doc.error().ToString().c_str());
      continue;
    }
    std::printf("%s: %d pages\n", path.c_str(), (*doc)->info().page_count());
    const std::string name = std::filesystem::path(path).filename().string();
    auto* bench = benchmark::RegisterBenchmark(
        name.c_str(),
        [path, options](benchmark::State& state) { RenderDocument(state, path, options); });
    bench->Unit(benchmark::kMillisecond)->UseRealTime()->Threads(1);
    if (threads > 1) bench->Threads(threads);
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

}  // namespace
}  // namespace mineru::pdf

int main(int argc, char** argv) { return mineru::pdf::Main(argc, argv); }
