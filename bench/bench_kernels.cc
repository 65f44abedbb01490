// SPDX-License-Identifier: Apache-2.0
// Kernel workbench: the matrix products and attention shapes MinerU2.5 runs, each reported as
// GFLOP/s (or GB/s for weight-streaming products) and as a fraction of this machine's measured
// float32 FMA peak (or DRAM read bandwidth). The header also prints the bf16- and int8-dot peaks.
//
//   build/bench/bench_kernels [--benchmark_filter=MatMul]
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "base/simd_targets.h"
#include "ops/attention.h"
#include "ops/machine_peak.h"
#include "ops/packed_matrix.h"
#include "ops/q8_matrix.h"

namespace mineru::ops {
namespace {

ThreadPool& Pool() {
  static ThreadPool pool(0);
  return pool;
}
double g_peak_gflops = 0, g_bandwidth_gbps = 0;
// The dot-product ceilings, for the header and the context; 0 where the CPU lacks the
// instruction.
double g_bf16_dot_peak_gflops = 0, g_int8_dot_peak_gops = 0;

// "123.4 GFLOP/s" or "not available on this CPU".
std::string PeakText(double peak, const char* unit) {
  if (peak <= 0) return "not available on this CPU";
  char text[64];
  std::snprintf(text, sizeof(text), "%.1f %s", peak, unit);
  return text;
}

std::vector<float> Random(size_t n) {
  std::mt19937 rng(42);
  std::normal_distribution<float> dist;
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

// GFLOP/s (GOP/s for integer products) and weight GB/s (bytes streamed per product: the decode
// figure of merit), each beside this machine's float32 peak.
void SetMatMulCounters(benchmark::State& state, int64_t m, int64_t k, int64_t n,
                       double weight_bytes, const char* ops = "GFLOP/s") {
  const double flops = 2.0 * static_cast<double>(m * k * n);
  state.counters[ops] =
      benchmark::Counter(flops / 1e9, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["of_peak"] = benchmark::Counter(flops / 1e9 / g_peak_gflops,
                                                 benchmark::Counter::kIsIterationInvariantRate);
  const double bytes = weight_bytes;
  state.counters["GB/s_weights"] =
      benchmark::Counter(bytes / 1e9, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["of_bandwidth"] = benchmark::Counter(
      bytes / 1e9 / g_bandwidth_gbps, benchmark::Counter::kIsIterationInvariantRate);
}

std::vector<uint16_t> Bf16Weights(int64_t n, int64_t k, const std::vector<float>& x) {
  std::vector<uint16_t> w(static_cast<size_t>(n * k));
  for (size_t i = 0; i < w.size(); ++i) w[i] = F32ToBf16(x[i % x.size()] * 0.05f);
  return w;
}

// args: m, k, n. bf16 weights [n, k], packed once outside the timed loop.
void BM_PackedMatMul(benchmark::State& state) {
  const int64_t m = state.range(0), k = state.range(1), n = state.range(2);
  const std::vector<float> x = Random(static_cast<size_t>(m * k));
  PackedMatrix packed;
  {
    const std::vector<uint16_t> w = Bf16Weights(n, k, x);
    packed = PackedMatrix::Pack(Pool(), MatrixView{w.data(), DType::kBF16, n, k});
  }
  std::vector<float> y(static_cast<size_t>(m * n));
  for (auto _ : state) {
    MatMul(Pool(), x.data(), m, k, packed, nullptr, y.data(), n, false);
    benchmark::DoNotOptimize(y.data());
  }
  SetMatMulCounters(state, m, k, n, static_cast<double>(packed.bytes()));
}

// The same with f32 weights (f32 panels).
void BM_PackedMatMulF32(benchmark::State& state) {
  const int64_t m = state.range(0), k = state.range(1), n = state.range(2);
  const std::vector<float> x = Random(static_cast<size_t>(m * k));
  PackedMatrix packed;
  {
    std::vector<float> w(static_cast<size_t>(n * k));
    for (size_t i = 0; i < w.size(); ++i) w[i] = x[i % x.size()] * 0.05f;
    packed = PackedMatrix::Pack(Pool(), MatrixView{w.data(), DType::kF32, n, k});
  }
  std::vector<float> y(static_cast<size_t>(m * n));
  for (auto _ : state) {
    MatMul(Pool(), x.data(), m, k, packed, nullptr, y.data(), n, false);
    benchmark::DoNotOptimize(y.data());
  }
  SetMatMulCounters(state, m, k, n, static_cast<double>(packed.bytes()));
}

// args: m, k, n, path (an index into Q8MatMulPaths(): 0 is the one MatMul takes by itself). The
// bf16 weights of BM_PackedMatMul quantized to Q8 (1.125 bytes per weight) once outside the
// timed loop; the activations are quantized inside it, as the engine would.
void BM_Q8MatMul(benchmark::State& state) {
  const int64_t m = state.range(0), k = state.range(1), n = state.range(2);
  const std::vector<const char*> paths = Q8MatMulPaths();
  const auto path = static_cast<size_t>(state.range(3));
  if (path >= paths.size()) {
    state.SkipWithError("no such path on this CPU");
    return;
  }
  ForceQ8MatMulPath(paths[path]);
  const std::vector<float> x = Random(static_cast<size_t>(m * k));
  Q8Matrix q8;
  {
    const std::vector<uint16_t> w = Bf16Weights(n, k, x);
    q8 = Q8Matrix::Quantize(Pool(), MatrixView{w.data(), DType::kBF16, n, k});
  }
  std::vector<float> y(static_cast<size_t>(m * n));
  for (auto _ : state) {
    MatMul(Pool(), x.data(), m, k, q8, nullptr, y.data(), n, false);
    benchmark::DoNotOptimize(y.data());
  }
  SetMatMulCounters(state, m, k, n, static_cast<double>(q8.bytes()), "GOP/s");
  state.SetLabel(Q8MatMulPath());
  ForceQ8MatMulPath("");
}

// The Q8 comparison: decode (m = 1), a prefill chunk and a whole vision page, over the vision
// MLP's up projection (K 1280, n 5120) and the decoder's fused gate/up half (K 896, n 4864).
void Q8Shapes(benchmark::internal::Benchmark* b) {
  for (int64_t m : {1, 512, 5476}) {
    b->Args({m, 1280, 5120});
    b->Args({m, 896, 4864});
  }
}
// The same shapes on the path MatMul takes by itself.
void Q8ShapesBestPath(benchmark::internal::Benchmark* b) {
  for (int64_t m : {1, 512, 5476}) {
    b->Args({m, 1280, 5120, 0});
    b->Args({m, 896, 4864, 0});
  }
}
// The same product on every other path this CPU has (the slower kernel sets and the portable
// loop), at decode and a prefill chunk: what a CPU without the best instructions gets.
void Q8OtherPaths(benchmark::internal::Benchmark* b) {
  const auto paths = static_cast<int64_t>(Q8MatMulPaths().size());
  for (int64_t path = 1; path < paths; ++path) {
    for (int64_t m : {1, 64}) b->Args({m, 896, 4864, path});
  }
}

// Decoder weights of MinerU2.5 (width 896, MLP 4864, kv width 128, vocabulary 151,936) as the
// engine runs them: o-proj, fused q/k/v, fused gate/up, down, head; m = batched decode rows.
void DecoderShapes(benchmark::internal::Benchmark* b) {
  const int64_t shapes[][2] = {{896, 896}, {896, 1152}, {896, 9728}, {4864, 896}, {896, 151936}};
  for (int64_t m : {1, 4, 16, 64}) {
    for (const auto& s : shapes) b->Args({m, s[0], s[1]});
  }
}

// args: queries, keys, heads, kv heads, head dim, causal.
void BM_Attention(benchmark::State& state) {
  const int64_t n_q = state.range(0), n_kv = state.range(1);
  const AttentionShape shape{static_cast<int>(state.range(2)), static_cast<int>(state.range(3)),
                             static_cast<int>(state.range(4)),
                             1.0f / std::sqrt(static_cast<float>(state.range(4))),
                             state.range(5) != 0};
  const int64_t q_width = int64_t{shape.n_heads} * shape.head_dim;
  const int64_t kv_width = int64_t{shape.n_kv_heads} * shape.head_dim;
  const std::vector<float> q = Random(static_cast<size_t>(n_q * q_width));
  const std::vector<float> kv = Random(static_cast<size_t>(n_kv * kv_width));
  const int64_t cap = RoundUpKv(n_kv);
  std::vector<float> keys(static_cast<size_t>(KvChunkFloats(shape, cap))), values(keys.size());
  PackKv(Pool(), shape, kv.data(), kv_width, kv.data(), kv_width, n_kv,
         {keys.data(), values.data(), cap}, 0);
  const KvChunk chunk{keys.data(), values.data(), n_kv, cap};
  std::vector<float> out(static_cast<size_t>(n_q * q_width));
  const AttentionProblem problem{q.data(),   q_width, n_q, n_kv - n_q, std::span(&chunk, 1),
                                 out.data(), q_width};
  for (auto _ : state) {
    Attention(Pool(), shape, std::span(&problem, 1));
    benchmark::DoNotOptimize(out.data());
  }
  // q.k and p.v: 2 FLOPs per multiply-add, over the keys each query sees.
  double pairs = static_cast<double>(n_q) * static_cast<double>(n_kv);
  if (shape.causal) pairs -= static_cast<double>(n_q) * static_cast<double>(n_q - 1) / 2;
  const double flops = 4.0 * pairs * static_cast<double>(q_width);
  state.counters["GFLOP/s"] =
      benchmark::Counter(flops / 1e9, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["of_peak"] = benchmark::Counter(flops / 1e9 / g_peak_gflops,
                                                 benchmark::Counter::kIsIterationInvariantRate);
}

// Vision tower (1036 x 1036 page: 5,476 patches, width 1280, MLP 5120) and its merger.
BENCHMARK(BM_PackedMatMul)
    ->Args({5476, 1280, 3840})
    ->Args({5476, 1280, 1280})
    ->Args({5476, 1280, 5120})
    ->Args({5476, 5120, 1280})
    ->Args({1369, 5120, 5120})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
// The decoder's fused shapes (o, q|k|v, gate|up, down, head) at decode batch sizes 1-64.
BENCHMARK(BM_PackedMatMul)->Apply(DecoderShapes)->Unit(benchmark::kMicrosecond)->UseRealTime();
// Decoder prefill of 1,400 tokens.
BENCHMARK(BM_PackedMatMul)
    ->Args({1400, 896, 1152})
    ->Args({1400, 896, 896})
    ->Args({1400, 896, 9728})
    ->Args({1400, 4864, 896})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
// Q8 next to the bf16 and f32 packed products on the same shapes.
BENCHMARK(BM_Q8MatMul)->Apply(Q8ShapesBestPath)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(BM_Q8MatMul)->Apply(Q8OtherPaths)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(BM_PackedMatMul)->Apply(Q8Shapes)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(BM_PackedMatMulF32)->Apply(Q8Shapes)->Unit(benchmark::kMicrosecond)->UseRealTime();
// Vision attention (16 heads of 80), decoder prefill (14/2 heads of 64, causal), one decode step.
BENCHMARK(BM_Attention)
    ->Args({5476, 5476, 16, 16, 80, 0})
    ->Args({1369, 1369, 16, 16, 80, 0})
    ->Args({1400, 1400, 14, 2, 64, 1})
    ->Args({1, 1400, 14, 2, 64, 1})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
}  // namespace mineru::ops

int main(int argc, char** argv) {
  using namespace mineru::ops;
  g_peak_gflops = MeasureFmaPeakGflops(Pool());
  g_bf16_dot_peak_gflops = MeasureBf16DotPeakGflops(Pool());
  g_int8_dot_peak_gops = MeasureInt8DotPeakGops(Pool());
  g_bandwidth_gbps = MeasureReadBandwidthGBps(Pool());
  std::printf(
      "threads %d, SIMD %s, measured float32 FMA peak %.1f GFLOP/s, bf16 dot peak %s, int8 dot "
      "peak %s, read bandwidth %.1f GB/s\n",
      Pool().num_threads(), mineru::CurrentSimdTargetName().c_str(), g_peak_gflops,
      PeakText(g_bf16_dot_peak_gflops, "GFLOP/s").c_str(),
      PeakText(g_int8_dot_peak_gops, "GOP/s").c_str(), g_bandwidth_gbps);
  benchmark::Initialize(&argc, argv);
  benchmark::AddCustomContext("fma_peak_gflops", std::to_string(g_peak_gflops));
  benchmark::AddCustomContext("bf16_dot_peak_gflops", std::to_string(g_bf16_dot_peak_gflops));
  benchmark::AddCustomContext("int8_dot_peak_gops", std::to_string(g_int8_dot_peak_gops));
  benchmark::AddCustomContext("read_bandwidth_gbps", std::to_string(g_bandwidth_gbps));
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
