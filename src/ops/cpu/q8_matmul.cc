// SPDX-License-Identifier: Apache-2.0
// Quantization into the Q8Matrix layout and MatMul over it (contract in ops/q8_matrix.h).
//
// Two paths with one arithmetic. On x86-64 CPUs with AVX-512 VNNI (checked at run time; the
// file is compiled for the baseline, and only the functions marked Q8_TARGET use AVX-512) a
// register-tile kernel multiplies R rows by C panels: per group, R x C int32 accumulators start
// at the row's correction -128 * sum(p) and take 8 vpdpbusd steps (unsigned weight bytes x the
// row's 4 signed activation bytes, broadcast); then each is converted to float and folded into
// its float accumulator with one multiply (d * s) and one fused multiply-add, as the contract
// says. Everywhere else a plain loop computes the same integers and the same float operations.
// Highway 1.0.3 (Debian 12's) has no VNNI target, hence raw intrinsics.
//
// Work split (as cpu/packed_matmul.cc): tasks are (row block, contiguous run of panels). A task
// walks its run C panels at a time and, for each C, sweeps its row tiles over them: the C
// panels' bytes (C x K x 18 bytes) stay in L2 while the tiles reuse them, and with one row tile
// (decode) every weight byte is read from memory exactly once. Row blocks are sized so the
// block's quantized rows fit in L2 beside the panels.
#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

#include "ops/q8_matrix.h"

#if defined(__x86_64__)
#include <immintrin.h>
// GCC 12's AVX-512 headers build "undefined" vectors by self-initialization (__m512 __Y = __Y),
// which -Wmaybe-uninitialized reports at every inlined use; the value is never read.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#define MINERU_Q8_X86 1
#define Q8_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vnni,fma")))
#else
#define MINERU_Q8_X86 0
#endif

namespace mineru::ops {
namespace {

constexpr size_t kGroup = static_cast<size_t>(kQ8Group);
constexpr size_t kPanel = static_cast<size_t>(kQ8PanelCols);
constexpr size_t kBlockBytes = static_cast<size_t>(kQ8GroupBytes);
constexpr size_t kScaleOffset = kPanel * kGroup;  // the 16 scales follow the 512 bytes of q
// Quantized activation rows per row block: about this many bytes of them, within the bounds.
constexpr size_t kRowBlockBytes = 512 * 1024;
constexpr size_t kMinRowBlock = 48, kMaxRowBlock = 384;
// Below this many activation values, quantize them on the calling thread (a pool round trip
// costs more).
constexpr size_t kSerialQuantizeValues = 64 * 1024;

// Round to nearest even and clamp to [-127, 127]. NaN maps to -127, as the VNNI path's
// conversion (integer indefinite) clamped does.
inline int32_t RoundClamp(float value) {
  float r = std::nearbyint(value);
  if (!(r >= -127.0f)) r = -127.0f;
  if (r > 127.0f) r = 127.0f;
  return static_cast<int32_t>(r);
}

// The contract's group quantization of v[0..count) (the rest of the group counts as zero):
// writes 32 values to q and returns the scale.
inline float QuantizeGroup(const float* v, size_t count, int8_t* q) {
  float amax = 0.0f;
  for (size_t t = 0; t < count; ++t) amax = std::max(amax, std::fabs(v[t]));
  const float scale = amax / 127.0f;
  for (size_t t = 0; t < kGroup; ++t) {
    q[t] = static_cast<int8_t>(t < count && scale != 0.0f ? RoundClamp(v[t] / scale) : 0);
  }
  return scale;
}

// Activations of a call, quantized: row i's values at q[i * kp], its scales at s[i * groups]
// and corrections -128 * sum_t p[i, 32 g + t] at c[i * groups].
struct QuantizedRows {
  size_t kp = 0, groups = 0;
  std::unique_ptr<int8_t[]> q;
  std::unique_ptr<float[]> s;
  std::unique_ptr<int32_t[]> c;
};

void QuantizeRowPortable(const float* x, size_t depth, size_t groups, int8_t* q, float* s,
                         int32_t* c) {
  for (size_t g = 0; g < groups; ++g) {
    const size_t k0 = g * kGroup;
    s[g] = QuantizeGroup(x + k0, std::min(kGroup, depth - k0), q + k0);
    int32_t sum = 0;
    for (size_t t = 0; t < kGroup; ++t) sum += q[k0 + t];
    c[g] = -128 * sum;
  }
}

// What every task of one call reads and writes.
struct Q8Job {
  const QuantizedRows* x;
  const uint8_t* panels;
  size_t panel_bytes;
  size_t n;
  const float* bias;
  float* y;
  size_t ldy;
  bool accumulate;
};

// Rows [i0, i0 + rows) of y over panels [p0, p0 + count): the contract literally, over the
// stored bytes.
void RowsPortable(const Q8Job& job, size_t i0, size_t rows, size_t p0, size_t count) {
  const QuantizedRows& x = *job.x;
  for (size_t i = i0; i < i0 + rows; ++i) {
    const int8_t* qx = x.q.get() + i * x.kp;
    const float* sx = x.s.get() + i * x.groups;
    for (size_t p = p0; p < p0 + count; ++p) {
      const uint8_t* panel = job.panels + p * job.panel_bytes;
      for (size_t col = 0; col < kPanel && p * kPanel + col < job.n; ++col) {
        const size_t j = p * kPanel + col;
        float acc = 0.0f;
        for (size_t g = 0; g < x.groups; ++g) {
          const uint8_t* block = panel + g * kBlockBytes;
          int32_t dot = 0;
          for (size_t t = 0; t < kGroup; ++t) {
            const int32_t w = int32_t{block[(t / 4) * 64 + col * 4 + t % 4]} - 128;
            dot += w * qx[g * kGroup + t];
          }
          float d;
          std::memcpy(&d, block + kScaleOffset + 4 * col, 4);
          acc = std::fma(static_cast<float>(dot), d * sx[g], acc);
        }
        const float b = job.bias != nullptr ? job.bias[j] : 0.0f;
        float& out = job.y[i * job.ldy + j];
        out = job.accumulate ? out + (acc + b) : acc + b;
      }
    }
  }
}

#if MINERU_Q8_X86

// The group quantization of QuantizeGroup with 16-lane vectors: the same max (exact in any
// order), the same IEEE division and rounding (cvtps uses the default round to nearest even),
// the same clamp, so the same bytes.
Q8_TARGET void QuantizeRowVnni(const float* x, size_t depth, size_t groups, int8_t* q, float* s,
                               int32_t* c) {
  const __m512i lo = _mm512_set1_epi32(-127), hi = _mm512_set1_epi32(127);
  for (size_t g = 0; g < groups; ++g) {
    const size_t k0 = g * kGroup, count = std::min(kGroup, depth - k0);
    const __mmask16 m0 = count >= 16 ? 0xFFFF : static_cast<__mmask16>((1u << count) - 1);
    const __mmask16 m1 = count >= 32  ? 0xFFFF
                         : count > 16 ? static_cast<__mmask16>((1u << (count - 16)) - 1)
                                      : 0;
    const __m512 v0 = _mm512_maskz_loadu_ps(m0, x + k0);
    const __m512 v1 = _mm512_maskz_loadu_ps(m1, x + k0 + 16);
    const float amax = _mm512_reduce_max_ps(_mm512_max_ps(_mm512_abs_ps(v0), _mm512_abs_ps(v1)));
    const float scale = amax / 127.0f;
    s[g] = scale;
    if (scale == 0.0f) {
      std::memset(q + k0, 0, kGroup);
      c[g] = 0;
      continue;
    }
    const __m512 sv = _mm512_set1_ps(scale);
    const __m512i q0 =
        _mm512_min_epi32(_mm512_max_epi32(_mm512_cvtps_epi32(_mm512_div_ps(v0, sv)), lo), hi);
    const __m512i q1 =
        _mm512_min_epi32(_mm512_max_epi32(_mm512_cvtps_epi32(_mm512_div_ps(v1, sv)), lo), hi);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(q + k0), _mm512_cvtepi32_epi8(q0));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(q + k0 + 16), _mm512_cvtepi32_epi8(q1));
    c[g] = -128 * _mm512_reduce_add_epi32(_mm512_add_epi32(q0, q1));
  }
}

// Tiles have at most this many rows; a tile of R rows takes up to PanelsForRows(R) panels, so
// that its R C int32 and R C float accumulators, the C weight vectors of a step and one
// broadcast fit the 32 vector registers (1 x 8, 2 x 5, 3 x 4, 4 x 3). Every shape has at least
// 8 independent vpdpbusd chains to cover the instruction's latency; for many rows 4 x 3 gives
// the most products per load (12 per 7).
constexpr size_t kMaxTileRows = 4;
constexpr size_t PanelsForRows(size_t rows) {
  return rows == 1 ? 8 : rows == 2 ? 5 : rows == 3 ? 4 : 3;
}
constexpr size_t kMaxTilePanels = PanelsForRows(1);

// R rows x C panels over the whole depth, then the contract's epilogue. The accumulator arrays
// are indexed only by constants of fully unrolled loops, so they live in registers.
template <size_t R, size_t C>
Q8_TARGET void TileVnni(const Q8Job& job, size_t i0, size_t p0) {
  const QuantizedRows& x = *job.x;
  const size_t groups = x.groups;
  const uint8_t* wp[C];
#pragma GCC unroll 16
  for (size_t c = 0; c < C; ++c) wp[c] = job.panels + (p0 + c) * job.panel_bytes;
  const int8_t* qx[R];
  const float* sx[R];
  const int32_t* cx[R];
#pragma GCC unroll 16
  for (size_t r = 0; r < R; ++r) {
    qx[r] = x.q.get() + (i0 + r) * x.kp;
    sx[r] = x.s.get() + (i0 + r) * groups;
    cx[r] = x.c.get() + (i0 + r) * groups;
  }
  __m512 acc[R][C];
#pragma GCC unroll 16
  for (size_t r = 0; r < R; ++r) {
#pragma GCC unroll 16
    for (size_t c = 0; c < C; ++c) acc[r][c] = _mm512_setzero_ps();
  }
  for (size_t g = 0; g < groups; ++g) {
    __m512i dot[R][C];
#pragma GCC unroll 16
    for (size_t r = 0; r < R; ++r) {
      const __m512i start = _mm512_set1_epi32(cx[r][g]);  // -128 * sum(p): undoes the + 128
#pragma GCC unroll 16
      for (size_t c = 0; c < C; ++c) dot[r][c] = start;
    }
    const size_t off = g * kBlockBytes;
#pragma GCC unroll 8
    for (size_t s = 0; s < 8; ++s) {
      __m512i w[C];
#pragma GCC unroll 16
      for (size_t c = 0; c < C; ++c) w[c] = _mm512_load_si512(wp[c] + off + 64 * s);
#pragma GCC unroll 16
      for (size_t r = 0; r < R; ++r) {
        int32_t four;
        std::memcpy(&four, qx[r] + g * kGroup + 4 * s, 4);
        const __m512i b = _mm512_set1_epi32(four);
#pragma GCC unroll 16
        for (size_t c = 0; c < C; ++c) dot[r][c] = _mm512_dpbusd_epi32(dot[r][c], w[c], b);
      }
    }
    __m512 d[C];
#pragma GCC unroll 16
    for (size_t c = 0; c < C; ++c) {
      d[c] = _mm512_load_ps(reinterpret_cast<const float*>(wp[c] + off + kScaleOffset));
    }
#pragma GCC unroll 16
    for (size_t r = 0; r < R; ++r) {
      const __m512 s = _mm512_set1_ps(sx[r][g]);
#pragma GCC unroll 16
      for (size_t c = 0; c < C; ++c) {  // acc = fma(float(dot), d * s, acc)
        acc[r][c] =
            _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot[r][c]), _mm512_mul_ps(d[c], s), acc[r][c]);
      }
    }
  }
#pragma GCC unroll 16
  for (size_t c = 0; c < C; ++c) {
    const size_t col = (p0 + c) * kPanel;
    if (col >= job.n) continue;  // a whole padding panel is never requested; kept for safety
    const size_t valid = std::min(kPanel, job.n - col);
    const __mmask16 mask = valid == kPanel ? 0xFFFF : static_cast<__mmask16>((1u << valid) - 1);
    const __m512 b =
        job.bias != nullptr ? _mm512_maskz_loadu_ps(mask, job.bias + col) : _mm512_setzero_ps();
#pragma GCC unroll 16
    for (size_t r = 0; r < R; ++r) {
      float* out = job.y + (i0 + r) * job.ldy + col;
      __m512 value = _mm512_add_ps(acc[r][c], b);  // acc + b
      if (job.accumulate) value = _mm512_add_ps(_mm512_maskz_loadu_ps(mask, out), value);
      _mm512_mask_storeu_ps(out, mask, value);
    }
  }
}

using TileFn = void (*)(const Q8Job&, size_t, size_t);

template <size_t R, size_t... Cs>
constexpr std::array<TileFn, sizeof...(Cs)> TileRow(std::index_sequence<Cs...>) {
  return {{&TileVnni<R, std::min(Cs + 1, PanelsForRows(R))>...}};
}
template <size_t... Rs>
constexpr auto TileTable(std::index_sequence<Rs...>) {
  return std::array{TileRow<Rs + 1>(std::make_index_sequence<kMaxTilePanels>())...};
}
constexpr auto kTiles = TileTable(std::make_index_sequence<kMaxTileRows>());

bool CpuHasVnni() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
         __builtin_cpu_supports("avx512vnni") && __builtin_cpu_supports("fma");
}

#else

constexpr size_t kMaxTileRows = 4;
constexpr size_t PanelsForRows(size_t) { return 8; }
bool CpuHasVnni() { return false; }

#endif  // MINERU_Q8_X86

std::atomic<bool> g_force_portable{false};

bool UseVnni() {
  static const bool has = CpuHasVnni();
  return has && !g_force_portable.load(std::memory_order_relaxed);
}

// Begin of range i when [0, total) is split into `parts` near-equal contiguous ranges.
inline size_t SplitPoint(size_t total, size_t parts, size_t i) { return total * i / parts; }

QuantizedRows QuantizeRows(ThreadPool& pool, const float* x, size_t m, size_t ldx, size_t depth,
                           size_t groups, bool vnni) {
  QuantizedRows rows;
  rows.kp = groups * kGroup;
  rows.groups = groups;
  rows.q.reset(new int8_t[std::max<size_t>(1, m * rows.kp)]);
  rows.s.reset(new float[std::max<size_t>(1, m * groups)]);
  rows.c.reset(new int32_t[std::max<size_t>(1, m * groups)]);
  auto quantize = [&](size_t i) {
    int8_t* q = rows.q.get() + i * rows.kp;
    float* s = rows.s.get() + i * groups;
    int32_t* c = rows.c.get() + i * groups;
#if MINERU_Q8_X86
    if (vnni) return QuantizeRowVnni(x + i * ldx, depth, groups, q, s, c);
#endif
    QuantizeRowPortable(x + i * ldx, depth, groups, q, s, c);
  };
  if (m * depth <= kSerialQuantizeValues) {
    for (size_t i = 0; i < m; ++i) quantize(i);
  } else {
    const size_t tasks = std::min(m, 4 * static_cast<size_t>(pool.num_threads()));
    pool.ParallelFor(tasks, [&](size_t task, int) {
      for (size_t i = SplitPoint(m, tasks, task); i < SplitPoint(m, tasks, task + 1); ++i) {
        quantize(i);
      }
    });
  }
  return rows;
}

// Writes panel p: every column's groups quantized, bytes and scales placed as the layout says.
void QuantizePanel(const StackedRows& src, int64_t rows, int64_t depth, int64_t groups, int64_t p,
                   uint8_t* dst) {
  for (int64_t g = 0; g < groups; ++g) {
    uint8_t* block = dst + g * kQ8GroupBytes;
    const int64_t k0 = g * kQ8Group;
    const size_t count = static_cast<size_t>(std::min(kQ8Group, depth - k0));
    for (size_t c = 0; c < kPanel; ++c) {
      const int64_t j = p * kQ8PanelCols + static_cast<int64_t>(c);
      float v[kGroup] = {};
      int8_t q[kGroup] = {};
      float scale = 0.0f;
      if (j < rows) {
        for (size_t t = 0; t < count; ++t) v[t] = src.Load(j, k0 + static_cast<int64_t>(t));
        scale = QuantizeGroup(v, count, q);
      }
      for (size_t t = 0; t < kGroup; ++t) {
        block[(t / 4) * 64 + c * 4 + t % 4] = static_cast<uint8_t>(q[t] + 128);
      }
      std::memcpy(block + kScaleOffset + 4 * c, &scale, 4);
    }
  }
}

}  // namespace

Q8Matrix::Q8Matrix(Q8Matrix&& other) noexcept
    : storage_(std::move(other.storage_)),
      data_(std::exchange(other.data_, nullptr)),
      rows_(std::exchange(other.rows_, 0)),
      cols_(std::exchange(other.cols_, 0)) {}

Q8Matrix& Q8Matrix::operator=(Q8Matrix&& other) noexcept {
  storage_ = std::move(other.storage_);
  data_ = std::exchange(other.data_, nullptr);
  rows_ = std::exchange(other.rows_, 0);
  cols_ = std::exchange(other.cols_, 0);
  return *this;
}

int64_t Q8Matrix::BytesFor(int64_t rows, int64_t cols) {
  if (rows < 0 || cols < 0) return -1;
  const int64_t panels = rows / kQ8PanelCols + (rows % kQ8PanelCols != 0 ? 1 : 0);
  const int64_t groups = cols / kQ8Group + (cols % kQ8Group != 0 ? 1 : 0);
  int64_t panel_bytes = 0, bytes = 0;
  if (__builtin_mul_overflow(groups, kQ8GroupBytes, &panel_bytes) ||
      __builtin_mul_overflow(panels, panel_bytes, &bytes)) {
    return -1;
  }
  return bytes;
}

Q8Matrix Q8Matrix::Quantize(ThreadPool& pool, std::span<const MatrixView> parts) {
  const StackedRows src(parts, "Q8Matrix::Quantize");
  Q8Matrix w;
  w.rows_ = src.rows();
  w.cols_ = src.cols();
  const int64_t bytes = BytesFor(w.rows_, w.cols_);
  MINERU_CHECK(bytes >= 0, "Q8Matrix::Quantize: [{}, {}] too large", w.rows_, w.cols_);
  if (bytes == 0) return w;
  w.storage_.reset(
      static_cast<uint8_t*>(::operator new[](static_cast<size_t>(bytes), std::align_val_t{64})));
  w.data_ = w.storage_.get();
  uint8_t* base = w.storage_.get();
  const int64_t panel_bytes = w.panel_bytes(), groups = w.groups();
  pool.ParallelFor(static_cast<size_t>(w.panels()), [&](size_t p, int) {
    QuantizePanel(src, w.rows_, w.cols_, groups, static_cast<int64_t>(p),
                  base + static_cast<int64_t>(p) * panel_bytes);
  });
  return w;
}

Q8Matrix Q8Matrix::Quantize(ThreadPool& pool, const MatrixView& w) {
  return Quantize(pool, std::span<const MatrixView>(&w, 1));
}

Result<Q8Matrix> Q8Matrix::View(std::span<const uint8_t> bytes, int64_t rows, int64_t cols) {
  const int64_t want = BytesFor(rows, cols);
  if (want < 0) {
    return Fail(ErrorCode::kInvalidArgument, "q8 matrix [{}, {}]: negative or too large", rows,
                cols);
  }
  if (static_cast<uint64_t>(want) != bytes.size()) {
    return Fail(ErrorCode::kCorrupt, "q8 matrix [{}, {}]: {} bytes, expected {}", rows, cols,
                bytes.size(), want);
  }
  if (reinterpret_cast<uintptr_t>(bytes.data()) % 64 != 0 && !bytes.empty()) {
    return Fail(ErrorCode::kCorrupt, "q8 matrix [{}, {}]: bytes not 64-byte aligned", rows, cols);
  }
  Q8Matrix w;
  w.data_ = bytes.empty() ? nullptr : bytes.data();
  w.rows_ = rows;
  w.cols_ = cols;
  return w;
}

const char* Q8MatMulPath() { return UseVnni() ? "avx512vnni" : "portable"; }

void ForceQ8MatMulPortable(bool portable) {
  g_force_portable.store(portable, std::memory_order_relaxed);
}

void MatMul(ThreadPool& pool, const float* x, int64_t m, int64_t ldx, const Q8Matrix& w,
            const float* bias, float* y, int64_t ldy, bool accumulate) {
  if (m <= 0 || w.rows() <= 0) return;
  const bool vnni = UseVnni();
  const auto rows = static_cast<size_t>(m), n = static_cast<size_t>(w.rows());
  const auto depth = static_cast<size_t>(w.cols()), groups = static_cast<size_t>(w.groups());
  const QuantizedRows qx =
      QuantizeRows(pool, x, rows, static_cast<size_t>(ldx), depth, groups, vnni);
  const Q8Job job{&qx,
                  w.data(),
                  static_cast<size_t>(w.panel_bytes()),
                  n,
                  bias,
                  y,
                  static_cast<size_t>(ldy),
                  accumulate};
  const size_t panels = static_cast<size_t>(w.panels());
  // Row blocks of near-equal size; within a block, row tiles of near-equal size.
  const size_t block_target =
      std::clamp(kRowBlockBytes / std::max<size_t>(1, qx.kp), kMinRowBlock, kMaxRowBlock);
  const size_t row_blocks = (rows + block_target - 1) / block_target;
  const size_t block_rows_max = (rows + row_blocks - 1) / row_blocks;
  const size_t tiles_max = (block_rows_max + kMaxTileRows - 1) / kMaxTileRows;
  const size_t panels_max = PanelsForRows((block_rows_max + tiles_max - 1) / tiles_max);
  // Long contiguous runs of panels (about 8 tasks per thread; with one row block a multiple of
  // the thread count): the prefetchers ramp up once per run, and threads finish together.
  const size_t threads = static_cast<size_t>(pool.num_threads());
  size_t runs = std::min((panels + panels_max - 1) / panels_max,
                         std::max<size_t>(1, (8 * threads + row_blocks - 1) / row_blocks));
  if (row_blocks == 1 && runs > threads) runs = runs / threads * threads;
  pool.ParallelFor(row_blocks * runs, [&](size_t task, int) {
    const size_t row_block = task / runs, run_index = task % runs;
    const size_t i_begin = SplitPoint(rows, row_blocks, row_block);
    const size_t block_rows = SplitPoint(rows, row_blocks, row_block + 1) - i_begin;
    const size_t run_begin = SplitPoint(panels, runs, run_index);
    const size_t run = SplitPoint(panels, runs, run_index + 1) - run_begin;
    if (!vnni) return RowsPortable(job, i_begin, block_rows, run_begin, run);
#if MINERU_Q8_X86
    const size_t row_tiles = (block_rows + kMaxTileRows - 1) / kMaxTileRows;
    const size_t c_max = PanelsForRows((block_rows + row_tiles - 1) / row_tiles);
    const size_t sets = (run + c_max - 1) / c_max;  // of near-equal size, at most c_max
    for (size_t set = 0; set < sets; ++set) {
      const size_t p0 = run_begin + SplitPoint(run, sets, set);
      const size_t c = run_begin + SplitPoint(run, sets, set + 1) - p0;
      for (size_t tile = 0; tile < row_tiles; ++tile) {
        const size_t i0 = i_begin + SplitPoint(block_rows, row_tiles, tile);
        const size_t r = i_begin + SplitPoint(block_rows, row_tiles, tile + 1) - i0;
        kTiles[r - 1][c - 1](job, i0, p0);
      }
    }
#endif
  });
}

}  // namespace mineru::ops
