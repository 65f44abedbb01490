// SPDX-License-Identifier: Apache-2.0
// Quantization into the Q8Matrix layout and MatMul over it (contract in ops/q8_matrix.h).
//
// The driver: the run-time choice of a kernel set (cpu/q8_kernels.h: AVX-512 VNNI in
// cpu/q8_vnni.cc, AVX2 in cpu/q8_avx2.cc), the quantization of the activations, the split of
// the work, and the portable loop that is both the fallback and every kernel set's twin: the
// contract literally, the same integers and the same float operations.
//
// Work split: tasks are (row block, contiguous run of panels). A task walks its run C panels at
// a time and, for each C, sweeps its row tiles over them: the C panels' bytes (C x K x 18 bytes)
// stay in L2 while the tiles reuse them, and with one row tile (decode) every weight byte is
// read from memory exactly once. Row blocks are sized so the block's quantized rows fit in L2
// beside the panels.
#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstring>
#include <memory>
#include <string_view>
#include <utility>
#include <vector>

#include "ops/cpu/q8_kernels.h"
#include "ops/q8_matrix.h"

namespace mineru::ops {
namespace {

using q8::kBlockBytes;
using q8::kGroup;
using q8::kMaxTileRows;
using q8::kPanel;
using q8::kScaleOffset;
using q8::QuantizedRows;

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

}  // namespace

void q8::QuantizeRowPortable(const float* x, size_t depth, size_t groups, int8_t* q, float* s,
                             int32_t* c) {
  for (size_t g = 0; g < groups; ++g) {
    const size_t k0 = g * kGroup;
    s[g] = QuantizeGroup(x + k0, std::min(kGroup, depth - k0), q + k0);
    int32_t sum = 0;
    for (size_t t = 0; t < kGroup; ++t) sum += q[k0 + t];
    c[g] = -128 * sum;
  }
}

namespace {

// Rows [i0, i0 + rows) of y over panels [p0, p0 + count): the contract literally, over the
// stored bytes.
void RowsPortable(const q8::Job& job, size_t i0, size_t rows, size_t p0, size_t count) {
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

// The kernel sets this CPU can run, best first, then the portable loop (null).
struct Paths {
  std::array<const q8::KernelSet*, 3> sets{};
  size_t count = 0;
  Paths() {
    for (const q8::KernelSet* set : {q8::VnniKernels(), q8::Avx2Kernels()}) {
      if (set != nullptr) sets[count++] = set;
    }
    sets[count++] = nullptr;
  }
};

const Paths& AvailablePaths() {
  static const Paths paths;
  return paths;
}

const char* PathName(const q8::KernelSet* set) { return set != nullptr ? set->name : "portable"; }

// Index into AvailablePaths() forced by a test or benchmark, or -1 for the best.
std::atomic<int> g_forced_path{-1};

const q8::KernelSet* ChosenKernels() {
  const int forced = g_forced_path.load(std::memory_order_relaxed);
  return AvailablePaths().sets[forced >= 0 ? static_cast<size_t>(forced) : 0];
}

// Begin of range i when [0, total) is split into `parts` near-equal contiguous ranges.
inline size_t SplitPoint(size_t total, size_t parts, size_t i) { return total * i / parts; }

QuantizedRows QuantizeRows(ThreadPool& pool, const float* x, size_t m, size_t ldx, size_t depth,
                           size_t groups, const q8::KernelSet* kernels) {
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
    (kernels != nullptr ? kernels->quantize_row : &q8::QuantizeRowPortable)(x + i * ldx, depth,
                                                                            groups, q, s, c);
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

std::vector<const char*> Q8MatMulPaths() {
  const Paths& paths = AvailablePaths();
  std::vector<const char*> names;
  for (size_t i = 0; i < paths.count; ++i) names.push_back(PathName(paths.sets[i]));
  return names;
}

const char* Q8MatMulPath() { return PathName(ChosenKernels()); }

bool ForceQ8MatMulPath(std::string_view path) {
  if (path.empty()) {
    g_forced_path.store(-1, std::memory_order_relaxed);
    return true;
  }
  const Paths& paths = AvailablePaths();
  for (size_t i = 0; i < paths.count; ++i) {
    if (path == PathName(paths.sets[i])) {
      g_forced_path.store(static_cast<int>(i), std::memory_order_relaxed);
      return true;
    }
  }
  return false;
}

void MatMul(ThreadPool& pool, const float* x, int64_t m, int64_t ldx, const Q8Matrix& w,
            const float* bias, float* y, int64_t ldy, bool accumulate) {
  if (m <= 0 || w.rows() <= 0) return;
  const q8::KernelSet* kernels = ChosenKernels();
  const auto rows = static_cast<size_t>(m), n = static_cast<size_t>(w.rows());
  const auto depth = static_cast<size_t>(w.cols()), groups = static_cast<size_t>(w.groups());
  const QuantizedRows qx =
      QuantizeRows(pool, x, rows, static_cast<size_t>(ldx), depth, groups, kernels);
  const q8::Job job{&qx,
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
  const size_t panels_max =
      kernels != nullptr
          ? kernels->panels_for_rows[(block_rows_max + tiles_max - 1) / tiles_max - 1]
          : q8::kMaxTilePanels;
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
    if (kernels == nullptr) return RowsPortable(job, i_begin, block_rows, run_begin, run);
    const size_t row_tiles = (block_rows + kMaxTileRows - 1) / kMaxTileRows;
    const size_t c_max = kernels->panels_for_rows[(block_rows + row_tiles - 1) / row_tiles - 1];
    const size_t sets = (run + c_max - 1) / c_max;  // of near-equal size, at most c_max
    for (size_t set = 0; set < sets; ++set) {
      const size_t p0 = run_begin + SplitPoint(run, sets, set);
      const size_t c = run_begin + SplitPoint(run, sets, set + 1) - p0;
      for (size_t tile = 0; tile < row_tiles; ++tile) {
        const size_t i0 = i_begin + SplitPoint(block_rows, row_tiles, tile);
        const size_t r = i_begin + SplitPoint(block_rows, row_tiles, tile + 1) - i0;
        kernels->tiles[r - 1][c - 1](job, i0, p0);
      }
    }
  });
}

}  // namespace mineru::ops
