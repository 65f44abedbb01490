// SPDX-License-Identifier: Apache-2.0
// The arithmetic of the model's matrix products (`--precision`):
//   fp32: float32 activations times the weights widened exactly to float32, float32 FMA chains
//         (ops/packed_matrix.h); the weights are packed into panels at load, or their panels
//         mapped from the file `mineru-cpp pack` writes (model/weights_file.h).
//   bf16: activations rounded to bf16 at each product's input, bf16 x bf16 products with
//         float32 accumulation (ops/bf16_matmul.h), read straight from the checkpoint mapping:
//         no packed copy, nothing to do at load. Attention's Q K^T and P V are bf16 products
//         too (ops/bf16_attention.h): the vision tower packs its keys and values as bf16, and
//         the decoder's KV cache stores them so (model/kv_cache.h). Norms, softmax, rotary,
//         activation functions and the residual stream stay float32.
// The library's default is fp32 (exact, what the parity tests pin); the command line's `auto`
// picks bf16 where the CPU has AVX-512 BF16 and fp32 elsewhere.
//
// And the weights' format (`--weights`):
//   bf16: the checkpoint's own values, products as the precision says;
//   int8: every matrix quantized to int8 per group of 32 with a float32 scale (ops/q8_matrix.h,
//         llama.cpp's Q8_0 scheme), read from the file `mineru-cpp quantize` writes
//         (model/weights_file.h) or quantized at load; products are int8 x int8 with the
//         activations quantized per row and group on the fly (AVX-512 VNNI or AVX2 where the
//         CPU has them).
//         Attention follows the precision.
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

enum class WeightFormat { kBf16, kInt8 };

std::string_view WeightFormatName(WeightFormat format);
std::optional<WeightFormat> ParseWeightFormat(std::string_view name);

// What a user should hear before loading with this choice ("" for nothing): a precision or a
// weight format whose products run a portable loop on this CPU — bf16 without AVX-512 BF16, int8
// with neither VNNI nor AVX2 — is correct but one to two orders of magnitude slower.
std::string SlowPathWarning(Precision precision, WeightFormat weights);

// How a model's matrices are prepared for compute at load.
struct ComputeOptions {
  Precision precision = Precision::kFp32;
  WeightFormat weights = WeightFormat::kBf16;
  // int8: the quantized file; empty means <checkpoint dir>/kQuantizedFileName when it exists,
  // else quantize at load.
  std::string quantized_path;
  // fp32 precision with the checkpoint's weights (kBf16): the packed-panels file; empty means
  // <checkpoint dir>/kPackedFileName when it exists, else pack at load. Unused otherwise.
  std::string packed_path;
};

}  // namespace mineru::model
