// SPDX-License-Identifier: Apache-2.0
#include "model/precision.h"

#include "ops/bf16_matmul.h"

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

std::string_view WeightFormatName(WeightFormat format) {
  return format == WeightFormat::kInt8 ? "int8" : "bf16";
}

std::optional<WeightFormat> ParseWeightFormat(std::string_view name) {
  if (name == "bf16") return WeightFormat::kBf16;
  if (name == "int8") return WeightFormat::kInt8;
  return std::nullopt;
}

}  // namespace mineru::model
