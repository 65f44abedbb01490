// SPDX-License-Identifier: Apache-2.0
#include "base/dtype.h"

#include <array>
#include <utility>

namespace mineru {
namespace {

struct DTypeInfo {
  DType dtype;
  std::string_view name;
  size_t size;
};

constexpr std::array<DTypeInfo, 13> kDTypes = {{
    {DType::kF32, "F32", 4},
    {DType::kF16, "F16", 2},
    {DType::kBF16, "BF16", 2},
    {DType::kF64, "F64", 8},
    {DType::kI8, "I8", 1},
    {DType::kU8, "U8", 1},
    {DType::kI16, "I16", 2},
    {DType::kU16, "U16", 2},
    {DType::kI32, "I32", 4},
    {DType::kU32, "U32", 4},
    {DType::kI64, "I64", 8},
    {DType::kU64, "U64", 8},
    {DType::kBool, "BOOL", 1},
}};

const DTypeInfo& Info(DType dtype) { return kDTypes[static_cast<size_t>(dtype)]; }

}  // namespace

size_t DTypeSize(DType dtype) { return Info(dtype).size; }
std::string_view DTypeName(DType dtype) { return Info(dtype).name; }

std::optional<DType> DTypeFromName(std::string_view name) {
  for (const DTypeInfo& info : kDTypes) {
    if (info.name == name) return info.dtype;
  }
  return std::nullopt;
}

uint16_t F32ToF16(float value) {
  const uint32_t bits = std::bit_cast<uint32_t>(value);
  const uint32_t sign = (bits >> 16) & 0x8000u;
  const uint32_t abs = bits & 0x7fffffffu;
  if (abs > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u);   // NaN
  if (abs >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // overflow -> inf
  if (abs < 0x38800000u) {                                               // subnormal or zero
    // value = abs_float; f16 subnormal unit is 2^-24.
    const float magnitude = std::bit_cast<float>(abs);
    // Adding 0.5 (2^-1) aligns the 2^-24 unit to the float32 mantissa LSB region; the FPU's
    // round-to-nearest-even does the rounding.
    const float shifted = magnitude + 0.5f;
    return static_cast<uint16_t>(sign | (std::bit_cast<uint32_t>(shifted) - 0x3f000000u));
  }
  const uint32_t rounded = abs + 0xfffu + ((abs >> 13) & 1u);
  return static_cast<uint16_t>(sign | ((rounded - 0x38000000u) >> 13));
}

}  // namespace mineru
