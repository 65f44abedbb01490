// SPDX-License-Identifier: Apache-2.0
// Tokenizer throughput on one core, in MB (10^6 bytes) of UTF-8 text per second (the "MB=x/s"
// column).
//
//   tools/tokenizer-reference/fetch.sh build/tokenizer-reference
//   build/bench/bench_tokenizer build/tokenizer-reference/tokenizer.json
//       tests/data/tokenizer/pdf-text/*.txt    (one command line)
//
// EncodeDocument: each text file encoded whole, as parse encodes a page (the BPE cache is warm
// after the first iteration). EncodeColdCache: the same with a fresh tokenizer every iteration
// (loading not timed). EncodeLines: line by line, as short prompts are. Decode: ids back to text.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "base/mapped_file.h"
#include "text/tokenizer.h"

namespace {

using mineru::text::Tokenizer;

std::string g_tokenizer_path;
std::unique_ptr<Tokenizer> g_tokenizer;
std::vector<std::string> g_documents;
size_t g_bytes = 0;

void Throughput(benchmark::State& state, size_t bytes_per_iteration) {
  state.counters["MB"] = benchmark::Counter(
      static_cast<double>(bytes_per_iteration) * static_cast<double>(state.iterations()) / 1e6,
      benchmark::Counter::kIsRate);
}

void EncodeDocument(benchmark::State& state) {
  for (auto _ : state) {
    for (const std::string& document : g_documents) {
      auto ids = g_tokenizer->Encode(document);
      if (!ids) state.SkipWithError(ids.error().ToString().c_str());
      benchmark::DoNotOptimize(ids);
    }
  }
  Throughput(state, g_bytes);
}

void EncodeColdCache(benchmark::State& state) {
  for (auto _ : state) {
    state.PauseTiming();
    auto fresh = Tokenizer::Load(g_tokenizer_path);
    state.ResumeTiming();
    for (const std::string& document : g_documents) {
      auto ids = (*fresh)->Encode(document);
      benchmark::DoNotOptimize(ids);
    }
    state.PauseTiming();
    fresh->reset();
    state.ResumeTiming();
  }
  Throughput(state, g_bytes);
}

void EncodeLines(benchmark::State& state) {
  std::vector<std::string> lines;
  for (const std::string& document : g_documents) {
    size_t start = 0;
    for (size_t end; (end = document.find('\n', start)) != std::string::npos; start = end + 1) {
      lines.push_back(document.substr(start, end + 1 - start));
    }
    if (start < document.size()) lines.push_back(document.substr(start));
  }
  for (auto _ : state) {
    for (const std::string& line : lines) benchmark::DoNotOptimize(g_tokenizer->Encode(line));
  }
  Throughput(state, g_bytes);
}

void Decode(benchmark::State& state) {
  std::vector<std::vector<int32_t>> ids;
  for (const std::string& document : g_documents) ids.push_back(*g_tokenizer->Encode(document));
  for (auto _ : state) {
    for (const std::vector<int32_t>& one : ids) benchmark::DoNotOptimize(g_tokenizer->Decode(one));
  }
  Throughput(state, g_bytes);
}

BENCHMARK(EncodeDocument)->Unit(benchmark::kMillisecond);
BENCHMARK(EncodeColdCache)->Unit(benchmark::kMillisecond);
BENCHMARK(EncodeLines)->Unit(benchmark::kMillisecond);
BENCHMARK(Decode)->Unit(benchmark::kMillisecond);

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);  // removes the --benchmark_* flags
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s TOKENIZER_JSON TEXT_FILE... [--benchmark_* flags]\n", argv[0]);
    return 2;
  }
  g_tokenizer_path = argv[1];
  auto tokenizer = Tokenizer::Load(g_tokenizer_path);
  if (!tokenizer) {
    std::fprintf(stderr, "%s\n", tokenizer.error().ToString().c_str());
    return 1;
  }
  g_tokenizer = std::move(*tokenizer);
  for (int i = 2; i < argc; ++i) {
    auto text = mineru::ReadFileToString(argv[i], size_t{1} << 30);
    if (!text) {
      std::fprintf(stderr, "%s\n", text.error().ToString().c_str());
      return 1;
    }
    g_bytes += text->size();
    g_documents.push_back(std::move(*text));
  }
  std::printf("%zu documents, %zu bytes of text\n", g_documents.size(), g_bytes);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
