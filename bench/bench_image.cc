// SPDX-License-Identifier: Apache-2.0
// The image input path on a 200-DPI page: decoding (PNG, JPEG), the 1036 x 1036 layout resize
// (SIMD and the scalar twin), and Qwen2-VL preprocessing, on one thread and on all of them.
//
//   build/bench/bench_image [--page=PAGE.png] [benchmark flags]
//
// The page defaults to tests/data/images/pages/unittest_p1_200dpi.png under the working
// directory (run from the repository root); its JPEG is encoded here at quality 90. Counters:
// MB/s of encoded input for decoding, megapixels per second of source for resizing, images/s.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "base/simd_targets.h"
#include "base/thread_pool.h"
#include "image/decode.h"
#include "image/encode.h"
#include "image/mineru_crops.h"
#include "image/qwen2vl_preprocess.h"
#include "image/resize.h"

namespace mineru::image {
namespace {

std::string g_page_path = "tests/data/images/pages/unittest_p1_200dpi.png";

struct Page {
  std::vector<uint8_t> png, jpeg;
  RgbImage rgb;
};

// A stand-in when the page file is missing: black "text lines" on white, 1700 x 2200.
RgbImage SyntheticPage() {
  RgbImage page = *MakeImage(1700, 2200, 255, 255, 255);
  for (int64_t y = 150; y < 2050; y += 40) {
    for (int64_t x = 150; x < 1550; ++x) {
      if ((x / 9 + y) % 7 == 0) continue;  // word gaps
      for (int64_t dy = 0; dy < 18; ++dy) {
        uint8_t* p = page.row(y + dy) + x * 3;
        if (((x * 31 + dy * 17) >> 3) % 3 == 0) p[0] = p[1] = p[2] = 20;
      }
    }
  }
  return page;
}

const Page& GetPage() {
  static const Page page = [] {
    Page p;
    std::FILE* f = std::fopen(g_page_path.c_str(), "rb");
    if (f != nullptr) {
      std::fseek(f, 0, SEEK_END);
      p.png.resize(static_cast<size_t>(std::ftell(f)));
      std::fseek(f, 0, SEEK_SET);
      if (std::fread(p.png.data(), 1, p.png.size(), f) != p.png.size()) p.png.clear();
      std::fclose(f);
    }
    if (auto decoded = DecodeImage(p.png); decoded) {
      p.rgb = std::move(decoded->image);
    } else {
      std::fprintf(stderr, "bench_image: %s not readable, using a synthetic page\n",
                   g_page_path.c_str());
      p.rgb = SyntheticPage();
      p.png = *EncodePng(p.rgb);
    }
    p.jpeg = *EncodeJpeg(p.rgb, JpegEncodeOptions{.quality = 90});
    return p;
  }();
  return page;
}

int AllThreads() {
  const unsigned n = std::thread::hardware_concurrency();
  return n > 0 ? static_cast<int>(n) : 1;
}

void SetImageCounters(benchmark::State& state, size_t input_bytes, int64_t pixels) {
  const auto n = static_cast<double>(state.iterations());
  state.SetBytesProcessed(static_cast<int64_t>(input_bytes) * state.iterations());
  state.counters["images/s"] = benchmark::Counter(n, benchmark::Counter::kIsRate);
  state.counters["Mpx/s"] =
      benchmark::Counter(n * static_cast<double>(pixels) / 1e6, benchmark::Counter::kIsRate);
}

void BM_DecodePng(benchmark::State& state) {
  const Page& page = GetPage();
  for (auto _ : state) benchmark::DoNotOptimize(DecodeImage(page.png));
  SetImageCounters(state, page.png.size(), page.rgb.width * page.rgb.height);
}

void BM_DecodeJpeg(benchmark::State& state) {
  const Page& page = GetPage();
  for (auto _ : state) benchmark::DoNotOptimize(DecodeImage(page.jpeg));
  SetImageCounters(state, page.jpeg.size(), page.rgb.width * page.rgb.height);
}

// The page to MinerU's 1036 x 1036 layout image.
void BM_ResizeLayout(benchmark::State& state) {
  const Page& page = GetPage();
  ThreadPool pool(static_cast<int>(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(PrepareLayoutImage(page.rgb, &pool));
  SetImageCounters(state, page.rgb.pixels.size(), page.rgb.width * page.rgb.height);
  state.SetLabel(CurrentSimdTargetName() + ", " + std::to_string(state.range(0)) + " thread(s)");
}

void BM_ResizeLayoutScalarTwin(benchmark::State& state) {
  const Page& page = GetPage();
  for (auto _ : state) {
    benchmark::DoNotOptimize(ResizeBicubicScalar(page.rgb, kLayoutImageSize, kLayoutImageSize));
  }
  SetImageCounters(state, page.rgb.pixels.size(), page.rgb.width * page.rgb.height);
}

// Qwen2-VL preprocessing of the whole page with Hugging Face's default bounds (smart_resize to
// about a megapixel, bicubic, rescale, normalize, patches).
void BM_PreprocessPage(benchmark::State& state) {
  const Page& page = GetPage();
  ThreadPool pool(static_cast<int>(state.range(0)));
  const ImageProcessorConfig config;
  for (auto _ : state) benchmark::DoNotOptimize(PreprocessImage(page.rgb, config, &pool));
  SetImageCounters(state, page.rgb.pixels.size(), page.rgb.width * page.rgb.height);
  state.SetLabel(std::to_string(state.range(0)) + " thread(s)");
}

// MinerU's layout request end to end: decode the PNG, resize to 1036 x 1036, patches (with
// max_pixels 1605632, MinerU's bound, smart_resize keeps 1036).
void BM_LayoutRequestFromPng(benchmark::State& state) {
  const Page& page = GetPage();
  ThreadPool pool(static_cast<int>(state.range(0)));
  ImageProcessorConfig config;
  config.min_pixels = 50176;
  config.max_pixels = 1605632;
  for (auto _ : state) {
    auto decoded = DecodeImage(page.png);
    auto layout = PrepareLayoutImage(decoded->image, &pool);
    benchmark::DoNotOptimize(PreprocessImage(*layout, config, &pool));
  }
  SetImageCounters(state, page.png.size(), page.rgb.width * page.rgb.height);
  state.SetLabel(std::to_string(state.range(0)) + " thread(s)");
}

void ThreadArgs(benchmark::internal::Benchmark* b) {
  b->Arg(1);
  if (AllThreads() > 1) b->Arg(AllThreads());
  b->Unit(benchmark::kMillisecond)->UseRealTime();
}

BENCHMARK(BM_DecodePng)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_DecodeJpeg)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ResizeLayout)->Apply(ThreadArgs);
BENCHMARK(BM_ResizeLayoutScalarTwin)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PreprocessPage)->Apply(ThreadArgs);
BENCHMARK(BM_LayoutRequestFromPng)->Apply(ThreadArgs);

}  // namespace
}  // namespace mineru::image

int main(int argc, char** argv) {
  // --page=PATH is ours; everything else goes to Google Benchmark.
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    if (i > 0 && std::strncmp(argv[i], "--page=", 7) == 0) {
      mineru::image::g_page_path = argv[i] + 7;
    } else {
      args.push_back(argv[i]);
    }
  }
  int n = static_cast<int>(args.size());
  benchmark::Initialize(&n, args.data());
  if (benchmark::ReportUnrecognizedArguments(n, args.data())) return 2;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
