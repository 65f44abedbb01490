// SPDX-License-Identifier: Apache-2.0
// Element types of tensors in checkpoints and arrays, and the scalar conversions between the
// 16-bit float formats and float32.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string_view>

namespace mineru {

enum class DType : uint8_t {
  kF32,
  kF16,
  kBF16,
  kF64,
  kI8,
  kU8,
  kI16,
  kU16,
  kI32,
  kU32,
  kI64,
  kU64,
  kBool,
};

size_t DTypeSize(DType dtype);
// Safetensors spelling: "F32", "BF16", ...
std::string_view DTypeName(DType dtype);
std::optional<DType> DTypeFromName(std::string_view name);

// bfloat16 is the upper half of a float32: widening is exact.
inline float Bf16ToF32(uint16_t bits) { return std::bit_cast<float>(uint32_t{bits} << 16); }

// Rounds to nearest, ties to even (what torch's .to(bfloat16) does); NaN stays NaN.
inline uint16_t F32ToBf16(float value) {
  uint32_t bits = std::bit_cast<uint32_t>(value);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((bits >> 16) | 0x40u);
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>(bits >> 16);
}

// IEEE binary16 to float32, exact (subnormals, infinities and NaN included).
inline float F16ToF32(uint16_t h) {
  const uint32_t sign = uint32_t{h & 0x8000u} << 16;
  const uint32_t exponent = (h >> 10) & 0x1fu;
  uint32_t mantissa = h & 0x3ffu;
  uint32_t bits;
  if (exponent == 0x1f) {
    bits = sign | 0x7f800000u | (mantissa << 13);
  } else if (exponent != 0) {
    bits = sign | ((exponent + 112u) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    bits = sign;
  } else {  // subnormal: normalise
    int shift = 0;
    while ((mantissa & 0x400u) == 0) {
      mantissa <<= 1;
      ++shift;
    }
    bits = sign | ((113u - shift) << 23) | ((mantissa & 0x3ffu) << 13);
  }
  return std::bit_cast<float>(bits);
}

// float32 to IEEE binary16, round to nearest even, overflow to infinity.
uint16_t F32ToF16(float value);

}  // namespace mineru
