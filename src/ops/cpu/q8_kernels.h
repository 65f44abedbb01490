// SPDX-License-Identifier: Apache-2.0
// What the int8 product's driver (cpu/q8_matmul.cc) shares with its instruction-set kernels
// (cpu/q8_vnni.cc: AVX-512 VNNI; cpu/q8_avx2.cc: AVX2): the quantized activations of a call,
// the arguments of a register tile, and the table a kernel set fills in. Internal to mineru_ops.
//
// Every kernel set computes the contract of ops/q8_matrix.h exactly — the same int32 group dots,
// the same float32 epilogue in the same order — so all paths give the same bits, and the
// portable loop in cpu/q8_matmul.cc is the twin each is tested against.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>

#include "ops/q8_matrix.h"

namespace mineru::ops::q8 {

inline constexpr size_t kGroup = static_cast<size_t>(kQ8Group);
inline constexpr size_t kPanel = static_cast<size_t>(kQ8PanelCols);
inline constexpr size_t kBlockBytes = static_cast<size_t>(kQ8GroupBytes);
inline constexpr size_t kScaleOffset = kPanel * kGroup;  // the 16 scales follow 512 bytes of q

// Activations of a call, quantized: row i's values at q[i * kp], its scales at s[i * groups]
// and corrections -128 * sum_t p[i, 32 g + t] at c[i * groups].
struct QuantizedRows {
  size_t kp = 0, groups = 0;
  std::unique_ptr<int8_t[]> q;
  std::unique_ptr<float[]> s;
  std::unique_ptr<int32_t[]> c;
};

// What every task of one call reads and writes.
struct Job {
  const QuantizedRows* x;
  const uint8_t* panels;
  size_t panel_bytes;
  size_t n;
  const float* bias;
  float* y;
  size_t ldy;
  bool accumulate;
};

// Quantizes one activation row of `depth` values into groups (values, scales, corrections) as
// the contract says; the bytes equal the portable quantizer's.
using QuantizeRowFn = void (*)(const float* x, size_t depth, size_t groups, int8_t* q, float* s,
                               int32_t* c);
// The portable quantizer: the contract literally (cpu/q8_matmul.cc).
void QuantizeRowPortable(const float* x, size_t depth, size_t groups, int8_t* q, float* s,
                         int32_t* c);
// Outputs of rows [i0, i0 + R) over panels [p0, p0 + C) for one tile shape (R, C).
using TileFn = void (*)(const Job& job, size_t i0, size_t p0);

inline constexpr size_t kMaxTileRows = 4;
inline constexpr size_t kMaxTilePanels = 8;

// One instruction set's kernels. tiles[R - 1][C - 1] multiplies R rows by C panels, for
// 1 <= R <= kMaxTileRows and 1 <= C <= panels_for_rows[R - 1] (entries past that are null):
// the register budget decides how many panels a tile of R rows can hold.
struct KernelSet {
  const char* name;
  QuantizeRowFn quantize_row;
  std::array<size_t, kMaxTileRows> panels_for_rows;
  std::array<std::array<TileFn, kMaxTilePanels>, kMaxTileRows> tiles;
};

// The tile table of a kernel set from its tile function template, given as a class with
//   static constexpr std::array<size_t, kMaxTileRows> kPanelsForRows;
//   template <size_t R, size_t C> static constexpr TileFn kTile;   // &TheTile<R, C>
template <class Tiles, size_t R, size_t... Cs>
constexpr std::array<TileFn, kMaxTilePanels> TileRowOf(std::index_sequence<Cs...>) {
  constexpr size_t most = Tiles::kPanelsForRows[R - 1];
  return {{(Cs < most ? Tiles::template kTile<R, std::min(Cs + 1, most)> : nullptr)...}};
}
template <class Tiles, size_t... Rs>
constexpr std::array<std::array<TileFn, kMaxTilePanels>, kMaxTileRows> TileTableOf(
    std::index_sequence<Rs...>) {
  return {{TileRowOf<Tiles, Rs + 1>(std::make_index_sequence<kMaxTilePanels>())...}};
}
template <class Tiles>
KernelSet MakeKernelSet(const char* name, QuantizeRowFn quantize_row) {
  return {name, quantize_row, Tiles::kPanelsForRows,
          TileTableOf<Tiles>(std::make_index_sequence<kMaxTileRows>())};
}

// The kernel sets this CPU can run, or null: each checks the CPU itself (x86-64 only).
const KernelSet* VnniKernels();
const KernelSet* Avx2Kernels();

}  // namespace mineru::ops::q8
