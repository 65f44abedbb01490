// SPDX-License-Identifier: Apache-2.0
#include "model/precision.h"

#include "ops/bf16_matmul.h"
#include "ops/q8_matrix.h"

namespace mineru::model {

std::string_view PrecisionName(Precision precision) {
  return precision == Precision::kBf16 ? "bf16" : "fp32";
}

std::optional<Precision> ParsePrecision(std::string_view name) {
  if (name == "fp32") return Precision::kFp32;
  if (name == "bf16") return Precision::kBf16;
  if (name == "auto") return AutoPrecision();
  return std::nullopt;
}

Precision AutoPrecision() { return ops::Bf16DotIsNative() ? Precision::kBf16 : Precision::kFp32; }

std::string SlowPathWarning(Precision precision, WeightFormat weights) {
  // With int8 weights every matrix product is int8; attention alone follows the precision.
  const bool portable_int8 =
      weights == WeightFormat::kInt8 && std::string_view(ops::Q8MatMulPath()) == "portable";
  const bool portable_bf16 = precision == Precision::kBf16 && !ops::Bf16DotIsNative();
  if (portable_int8) {
    return "int8 products run the portable loop on this CPU (no AVX-512 VNNI or AVX2): "
           "about 50 times slower than with either; --weights bf16 is faster here";
  }
  if (portable_bf16) {
    return std::string(weights == WeightFormat::kInt8 ? "bf16 attention" : "bf16 products") +
           " run the portable loop on this CPU (no AVX-512 BF16); --precision fp32, what "
           "--precision auto picks here, is faster";
  }
  return "";
}

std::string_view WeightFormatName(WeightFormat format) {
  return format == WeightFormat::kInt8 ? "int8" : "bf16";
}

std::optional<WeightFormat> ParseWeightFormat(std::string_view name) {
  if (name == "bf16") return WeightFormat::kBf16;
  if (name == "int8") return WeightFormat::kInt8;
  return std::nullopt;
}

}  // namespace mineru::model
