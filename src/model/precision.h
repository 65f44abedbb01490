// SPDX-License-Identifier: Apache-2.0
// The arithmetic of the model's matrix products (`--precision`):
//   fp32: float32 activations times the weights widened exactly to float32, float32 FMA chains
//         (ops/packed_matrix.h); the weights are packed into panels at load.
//   bf16: activations rounded to bf16 at each product's input, bf16 x bf16 products with
//         float32 accumulation (ops/bf16_matmul.h), read straight from the checkpoint mapping:
//         no packed copy, nothing to do at load. Norms, softmax, rotary, activations functions,
//         attention and the residual stream stay float32.
// The library's default is fp32 (exact, what the parity tests pin); the command line's `auto`
// picks bf16 where the CPU has AVX-512 BF16 and fp32 elsewhere.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace mineru::model {

enum class Precision { kFp32, kBf16 };

std::string_view PrecisionName(Precision precision);
// "fp32" | "bf16" | "auto" (AutoPrecision()); anything else is nullopt.
std::optional<Precision> ParsePrecision(std::string_view name);
// bf16 where the CPU runs the bf16 product natively (vdpbf16ps), else fp32.
Precision AutoPrecision();

}  // namespace mineru::model
