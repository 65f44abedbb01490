// SPDX-License-Identifier: Apache-2.0
// Properties of the model's compute paths on the golden tiny checkpoint that the golden files
// cannot show: images batched together equal images alone, a prompt fed in pieces equals the
// prompt fed at once, and a block table too short for a step refuses the pass before anything
// is written. (Who owns which block, and a full pool refusing without change, is the engine's:
// tests/engine/scheduler_test.cc.)
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "../support/npy.h"
#include "model/greedy.h"
#include "model/kv_cache.h"
#include "model/model.h"

namespace mineru::model {
namespace {

const std::string kGolden = std::string(MINERU_TEST_DATA_DIR) + "/qwen2vl-tiny";

std::vector<float> Pixels(const std::string& image) {
  return testing_support::F32(kGolden + "/images/" + image + ".pixel_values.npy");
}

class EnginePathsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto loaded = Model::Load(kGolden + "/model");
    ASSERT_TRUE(loaded) << loaded.error().ToString();
    model_ = std::move(*loaded);
  }
  std::unique_ptr<Model> model_;
  ThreadPool pool_{2};
};

TEST_F(EnginePathsTest, ImagesEncodedTogetherEqualImagesAlone) {
  const std::vector<float> doc = Pixels("doc_400x300"), odd = Pixels("odd_333x517");
  const ImageGrid doc_grid{1, 22, 28}, odd_grid{1, 36, 24};
  std::vector<float> both = doc;
  both.insert(both.end(), odd.begin(), odd.end());
  const ImageGrid grids[] = {doc_grid, odd_grid};
  auto together = model_->vision().Encode(pool_, both, grids);
  auto doc_alone = model_->vision().Encode(pool_, doc, std::span(&doc_grid, 1));
  auto odd_alone = model_->vision().Encode(pool_, odd, std::span(&odd_grid, 1));
  ASSERT_TRUE(together && doc_alone && odd_alone);
  std::vector<float> alone = *doc_alone;
  alone.insert(alone.end(), odd_alone->begin(), odd_alone->end());
  // Each output row depends only on its own image, and every kernel's per-row arithmetic is
  // independent of how many rows share the call: bit-identical.
  EXPECT_EQ(*together, alone);
}

TEST_F(EnginePathsTest, TwoImagesInOnePromptAreSplicedInOrder) {
  const ModelConfig& config = model_->config();
  const auto vs = static_cast<int32_t>(config.vision_start_token_id);
  const auto ve = static_cast<int32_t>(config.vision_end_token_id);
  const auto img = static_cast<int32_t>(config.image_token_id);
  const ImageGrid doc_grid{1, 22, 28}, odd_grid{1, 36, 24};
  GreedyRequest request;
  request.ids = {151644, 872, 198, vs};
  request.ids.insert(request.ids.end(), 154, img);
  request.ids.insert(request.ids.end(), {ve, vs});
  request.ids.insert(request.ids.end(), 216, img);
  request.ids.insert(request.ids.end(), {ve, 3838, 151645});
  request.grids = {doc_grid, odd_grid};
  std::vector<float> pixels = Pixels("doc_400x300"), odd = Pixels("odd_333x517");
  pixels.insert(pixels.end(), odd.begin(), odd.end());
  std::vector<float> input;
  TraceFn trace = [&](std::string_view name, const float* data, int64_t rows, int64_t cols) {
    if (name == "decoder.input") input.assign(data, data + rows * cols);
  };
  GreedyOptions options;
  options.steps = 2;
  options.trace = &trace;
  auto result = RunGreedy(*model_, pool_, pixels, std::span(&request, 1), options);
  ASSERT_TRUE(result) << result.error().ToString();
  const int64_t d = config.text.hidden_size;
  ASSERT_EQ(result->vision.size(), static_cast<size_t>((154 + 216) * d));
  int64_t row = 0;
  for (size_t i = 0; i < request.ids.size(); ++i) {
    if (request.ids[i] != img) continue;
    ASSERT_TRUE(std::equal(input.begin() + static_cast<int64_t>(i) * d,
                           input.begin() + static_cast<int64_t>(i + 1) * d,
                           result->vision.begin() + row * d))
        << "image token " << row << " at position " << i;
    ++row;
  }
  EXPECT_EQ(row, 154 + 216);
  EXPECT_EQ(result->sequences[0].generated.size(), 2u);
}

// The k/v, q-and-attention and MLP passes run over row chunks (kVisionChunkBytes); chunks of 37
// rows end at odd rows inside an image and span the boundary between the two images, which the
// bf16 key packing and the per-chunk attention problems must handle; and the q and k/v rows'
// own products equal the fused product's columns: bit-identical to one chunk, in each precision
// and weight format.
TEST_F(EnginePathsTest, VisionRowChunksChangeNoBit) {
  const std::vector<float> doc = Pixels("doc_400x300"), odd = Pixels("odd_333x517");
  std::vector<float> both = doc;
  both.insert(both.end(), odd.begin(), odd.end());
  const ImageGrid grids[] = {{1, 22, 28}, {1, 36, 24}};
  ComputeOptions bf16;
  bf16.precision = Precision::kBf16;
  auto bf16_model = Model::Load(kGolden + "/model", {}, true, &pool_, bf16);
  ASSERT_TRUE(bf16_model) << bf16_model.error().ToString();
  ComputeOptions int8;
  int8.weights = WeightFormat::kInt8;
  auto int8_model = Model::Load(kGolden + "/model", {}, true, &pool_, int8);
  ASSERT_TRUE(int8_model) << int8_model.error().ToString();
  for (const Model* model : {model_.get(), bf16_model->get(), int8_model->get()}) {
    auto whole = model->vision().Encode(pool_, both, grids, nullptr, {.chunk_rows = 1 << 20});
    ASSERT_TRUE(whole) << whole.error().ToString();
    for (int64_t rows : {int64_t{37}, int64_t{256}, int64_t{616}}) {
      for (bool whole_qkv : {false, true}) {
        auto chunked = model->vision().Encode(pool_, both, grids, nullptr,
                                              {.chunk_rows = rows, .whole_qkv = whole_qkv});
        ASSERT_TRUE(chunked) << chunked.error().ToString();
        EXPECT_EQ(*chunked, *whole) << PrecisionName(model->precision()) << ", chunks of " << rows
                                    << (whole_qkv ? ", fused q/k/v products" : "");
      }
    }
  }
}

TEST_F(EnginePathsTest, VisionRejectsInconsistentInputs) {
  const std::vector<float> doc = Pixels("doc_400x300");
  const ImageGrid wrong{1, 22, 30};
  auto mismatch = model_->vision().Encode(pool_, doc, std::span(&wrong, 1));
  ASSERT_FALSE(mismatch);
  EXPECT_EQ(mismatch.error().code, ErrorCode::kInvalidArgument);
  const ImageGrid odd{1, 21, 28};
  EXPECT_FALSE(model_->vision().Encode(pool_, doc, std::span(&odd, 1)));
}

// Runs text-only prompt `ids` through the decoder in pieces of the given sizes and returns the
// logits of the last token.
std::vector<float> LastLogits(const Model& model, ThreadPool& pool, const std::vector<int32_t>& ids,
                              const std::vector<int64_t>& pieces) {
  const auto& text = model.config().text;
  KvCache cache = model.NewKvCache(16, 8);
  const std::vector<int32_t> table = {0, 1, 2, 3, 4, 5, 6, 7};
  std::vector<float> logits(static_cast<size_t>(text.vocab_size));
  int64_t at = 0;
  for (int64_t n : pieces) {
    std::vector<float> x(static_cast<size_t>(n * text.hidden_size));
    EXPECT_TRUE(model.decoder().Embed(pool, std::span(ids).subspan(at, n), x.data()));
    std::vector<std::array<int32_t, 3>> positions;
    for (int64_t i = 0; i < n; ++i) {
      const auto p = static_cast<int32_t>(at + i);
      positions.push_back({p, p, p});
    }
    const DecoderStep step{table, at, n};
    const int64_t last = n - 1;
    auto status = model.decoder().Forward(pool, cache, std::span(&step, 1), x.data(), positions,
                                          std::span(&last, 1), logits.data());
    EXPECT_TRUE(status) << status.error().ToString();
    at += n;
  }
  EXPECT_EQ(at, static_cast<int64_t>(ids.size()));
  return logits;
}

TEST_F(EnginePathsTest, PromptInPiecesEqualsPromptAtOnce) {
  std::vector<int32_t> ids;
  for (int i = 0; i < 40; ++i) ids.push_back(100 + 37 * i);
  const std::vector<float> once = LastLogits(*model_, pool_, ids, {40});
  // Pieces cross KV block boundaries (16 tokens) and take both paths of the packed products
  // (few rows streamed, many rows register-blocked), which sum every output in the same order;
  // attention sees the same keys in the same blocks: bit-identical.
  for (const std::vector<int64_t>& pieces :
       std::vector<std::vector<int64_t>>{{17, 23}, {1, 15, 16, 8}, {39, 1}, {40}}) {
    EXPECT_EQ(LastLogits(*model_, pool_, ids, pieces), once) << "pieces of " << pieces.size();
  }
}

// The same under bf16 precision, whose KV cache stores bf16 pairs of tokens: pieces that end on an
// odd token leave half a pair to the next piece, and the bf16 attention visits the same blocks
// in the same order.
TEST_F(EnginePathsTest, Bf16PromptInPiecesEqualsPromptAtOnce) {
  ComputeOptions bf16;
  bf16.precision = Precision::kBf16;
  auto loaded = Model::Load(kGolden + "/model", {}, true, &pool_, bf16);
  ASSERT_TRUE(loaded) << loaded.error().ToString();
  ASSERT_EQ(loaded.value()->NewKvCache(16, 1).precision(), Precision::kBf16);
  std::vector<int32_t> ids;
  for (int i = 0; i < 40; ++i) ids.push_back(100 + 37 * i);
  const std::vector<float> once = LastLogits(**loaded, pool_, ids, {40});
  for (const std::vector<int64_t>& pieces :
       std::vector<std::vector<int64_t>>{{17, 23}, {1, 15, 16, 8}, {39, 1}, {3, 5, 7, 25}}) {
    EXPECT_EQ(LastLogits(**loaded, pool_, ids, pieces), once) << "pieces of " << pieces.size();
  }
  // Half the bytes of the float32 cache's block, keys and values alike (head dims pair up).
  EXPECT_LT(KvCache::BlockBytes(model_->config().text, 16, Precision::kBf16),
            KvCache::BlockBytes(model_->config().text, 16, Precision::kFp32));
}

// A cache of the other precision is refused before anything is written.
TEST_F(EnginePathsTest, CacheOfAnotherPrecisionIsRefused) {
  const auto& text = model_->config().text;
  KvCache cache(text, 16, 1, Precision::kBf16);
  const std::vector<int32_t> table = {0}, ids = {100, 137};
  std::vector<float> x(static_cast<size_t>(2 * text.hidden_size));
  ASSERT_TRUE(model_->decoder().Embed(pool_, ids, x.data()));
  const std::vector<std::array<int32_t, 3>> positions = {{0, 0, 0}, {1, 1, 1}};
  const DecoderStep step{table, 0, 2};
  auto status = model_->decoder().Forward(pool_, cache, std::span(&step, 1), x.data(), positions,
                                          {}, nullptr);
  ASSERT_FALSE(status);
  EXPECT_EQ(status.error().code, ErrorCode::kInternal);
  EXPECT_NE(status.error().message.find("bf16"), std::string::npos) << status.error().message;
}

TEST_F(EnginePathsTest, ShortBlockTableRefusesBeforeWriting) {
  const auto& text = model_->config().text;
  std::vector<int32_t> ids;
  for (int i = 0; i < 24; ++i) ids.push_back(100 + 37 * i);
  const std::vector<float> once = LastLogits(*model_, pool_, ids, {24});
  KvCache cache(text, 16, 3);
  const std::vector<int32_t> table = {2, 0};  // any blocks, in token order
  std::vector<float> x(static_cast<size_t>(24 * text.hidden_size));
  std::vector<std::array<int32_t, 3>> positions;
  for (int32_t p = 0; p < 24; ++p) positions.push_back({p, p, p});
  std::vector<float> logits(static_cast<size_t>(text.vocab_size));
  ASSERT_TRUE(model_->decoder().Embed(pool_, std::span(ids).first(20), x.data()));
  const DecoderStep first{table, 0, 20};
  ASSERT_TRUE(model_->decoder().Forward(pool_, cache, std::span(&first, 1), x.data(),
                                        std::span(positions).first(20), {}, nullptr));
  // A second sequence's table of one block cannot hold 20 tokens; nor can a table naming a block
  // the cache does not have. Both passes are refused whole.
  const std::vector<int32_t> short_table = {1}, foreign = {1, 3};
  for (const std::vector<int32_t>* bad : {&short_table, &foreign}) {
    const DecoderStep both[] = {{table, 20, 4}, {*bad, 0, 20}};
    ASSERT_TRUE(model_->decoder().Embed(pool_, std::span(ids).subspan(20, 4), x.data()));
    auto status = model_->decoder().Forward(pool_, cache, both, x.data(),
                                            std::span(positions).first(24), {}, nullptr);
    ASSERT_FALSE(status);
    EXPECT_EQ(status.error().code, ErrorCode::kInvalidArgument);
  }
  // The first sequence goes on as if the refused passes never happened: bit-identical to the
  // prompt fed at once.
  ASSERT_TRUE(model_->decoder().Embed(pool_, std::span(ids).subspan(20, 4), x.data()));
  const DecoderStep rest{table, 20, 4};
  const int64_t last = 3;
  ASSERT_TRUE(model_->decoder().Forward(pool_, cache, std::span(&rest, 1), x.data(),
                                        std::span(positions).subspan(20, 4), std::span(&last, 1),
                                        logits.data()));
  EXPECT_EQ(logits, once);
}

TEST_F(EnginePathsTest, TokenIdsOutsideTheVocabularyAreErrors) {
  std::vector<float> x(static_cast<size_t>(model_->config().text.hidden_size));
  const int32_t too_big = static_cast<int32_t>(model_->config().text.vocab_size);
  const int32_t negative = -1;
  EXPECT_EQ(model_->decoder().Embed(pool_, std::span(&too_big, 1), x.data()).error().code,
            ErrorCode::kInvalidArgument);
  EXPECT_FALSE(model_->decoder().Embed(pool_, std::span(&negative, 1), x.data()));
}

}  // namespace
}  // namespace mineru::model
