// SPDX-License-Identifier: Apache-2.0
// Model::Load on copies of the golden checkpoint in other weight dtypes (F32, F16): the weights
// stay in their stored dtype, and greedy decoding gives bit-identical outputs to a BF16
// checkpoint of the same values, since kernels widen every dtype exactly to float32.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "../support/numeric.h"
#include "base/dtype.h"
#include "base/status.h"
#include "checkpoint_test_util.h"
#include "model/greedy.h"
#include "model/model.h"

namespace mineru::model {
namespace {

using testing::EditedGolden;
using testing::ExpectSameOutputs;
using testing::Greedy;
using testing::kGoldenModel;
using testing::OwnedTensor;
using testing_support::MaxDiff;

// The golden checkpoint with every tensor converted from BF16 by `convert` (one bf16 value in,
// the bytes of one value out).
std::string ConvertedGolden(const std::string& name, DType dtype,
                            const std::function<void(uint16_t, uint8_t*)>& convert) {
  return EditedGolden(name, [&](std::vector<OwnedTensor>& tensors) {
    for (OwnedTensor& t : tensors) {
      ASSERT_EQ(t.dtype, DType::kBF16) << t.name;
      const size_t n = t.data.size() / 2;
      std::vector<uint8_t> out(n * DTypeSize(dtype));
      for (size_t i = 0; i < n; ++i) {
        uint16_t bits;
        std::memcpy(&bits, t.data.data() + 2 * i, 2);
        convert(bits, out.data() + i * DTypeSize(dtype));
      }
      t.dtype = dtype;
      t.data = std::move(out);
    }
  });
}

TEST(WeightDTypeTest, F32CopyGivesBitIdenticalOutputs) {
  const std::string f32 = ConvertedGolden("f32", DType::kF32, [](uint16_t bits, uint8_t* out) {
    const float value = Bf16ToF32(bits);  // exact
    std::memcpy(out, &value, 4);
  });
  auto bf16_model = Model::Load(kGoldenModel);
  auto f32_model = Model::Load(f32);
  ASSERT_TRUE(bf16_model) << bf16_model.error().ToString();
  ASSERT_TRUE(f32_model) << f32_model.error().ToString();
  // Weights stay in their stored dtype (views into the mapping, not converted copies).
  EXPECT_EQ((*bf16_model)->weights().decoder.embed_tokens.dtype, DType::kBF16);
  EXPECT_EQ((*f32_model)->weights().decoder.embed_tokens.dtype, DType::kF32);
  EXPECT_EQ((*f32_model)->weights().vision.patch_embed.dtype, DType::kF32);
  EXPECT_EQ((*f32_model)->checkpoint().num_bytes(), 2 * (*bf16_model)->checkpoint().num_bytes());
  EXPECT_NE((*f32_model)->fingerprint(), (*bf16_model)->fingerprint());  // dtype is hashed

  // Kernels widen every dtype exactly to float32 and then do the same arithmetic.
  const GreedyResult bf16_out = Greedy(**bf16_model, 4);
  ASSERT_EQ(bf16_out.sequences.size(), 1u);
  EXPECT_EQ(bf16_out.sequences[0].generated.size(), 4u);
  ExpectSameOutputs(bf16_out, Greedy(**f32_model, 4));
}

TEST(WeightDTypeTest, F16CopyGivesBitIdenticalOutputs) {
  // Not every golden weight fits f16: a few embedding and weight values lie below f16's normal
  // range (2^-14) with more significant bits than its subnormals (steps of 2^-24) hold. So the
  // f16 copy is compared with a bf16 copy of the same f16-rounded values (which bf16 holds
  // exactly: at most 8 significant bits), and with the original only loosely.
  int64_t inexact = 0, inexact_normal = 0;
  const std::string f16 = ConvertedGolden("f16", DType::kF16, [&](uint16_t bits, uint8_t* out) {
    const float value = Bf16ToF32(bits);
    const uint16_t half = F32ToF16(value);
    if (std::bit_cast<uint32_t>(F16ToF32(half)) != std::bit_cast<uint32_t>(value)) {
      ++inexact;
      if (std::fabs(value) >= 0x1p-14f) ++inexact_normal;
    }
    std::memcpy(out, &half, 2);
  });
  EXPECT_EQ(inexact_normal, 0);  // in f16's normal range bf16 values convert exactly
  EXPECT_LT(inexact, 1000);      // 139 of 10 million in the committed checkpoint
  int64_t not_bf16 = 0;
  const std::string rounded =
      ConvertedGolden("bf16-rounded", DType::kBF16, [&](uint16_t bits, uint8_t* out) {
        const float value = F16ToF32(F32ToF16(Bf16ToF32(bits)));
        const uint16_t back = F32ToBf16(value);
        if (std::bit_cast<uint32_t>(Bf16ToF32(back)) != std::bit_cast<uint32_t>(value)) {
          ++not_bf16;
        }
        std::memcpy(out, &back, 2);
      });
  ASSERT_EQ(not_bf16, 0);

  auto original = Model::Load(kGoldenModel);
  auto f16_model = Model::Load(f16);
  auto bf16_model = Model::Load(rounded);
  ASSERT_TRUE(original) << original.error().ToString();
  ASSERT_TRUE(f16_model) << f16_model.error().ToString();
  ASSERT_TRUE(bf16_model) << bf16_model.error().ToString();
  EXPECT_EQ((*f16_model)->weights().decoder.layers[1].down.dtype, DType::kF16);
  EXPECT_EQ((*f16_model)->weights().decoder.embed_tokens.dtype, DType::kF16);
  EXPECT_NE((*f16_model)->fingerprint(), (*bf16_model)->fingerprint());

  const GreedyResult f16_out = Greedy(**f16_model, 4);
  ExpectSameOutputs(Greedy(**bf16_model, 4), f16_out);
  // Against the unrounded weights: changes under 2^-25 move the logits by far less than
  // the golden tests' 1e-4 and leave the greedy ids alone.
  const GreedyResult original_out = Greedy(**original, 4);
  ASSERT_EQ(original_out.sequences.size(), 1u);
  ASSERT_EQ(f16_out.sequences.size(), 1u);
  EXPECT_EQ(original_out.sequences[0].generated, f16_out.sequences[0].generated);
  EXPECT_LE(MaxDiff(original_out.sequences[0].logits_last, f16_out.sequences[0].logits_last), 1e-4);
}

}  // namespace
}  // namespace mineru::model
