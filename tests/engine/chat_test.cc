// SPDX-License-Identifier: Apache-2.0
// The engine's own front half: chat messages rendered with the checkpoint's tokenizer and RGB
// images preprocessed with its preprocessor_config.json give exactly what the same request
// gives as ready prompt ids and pixel values, and the result text is the tokenizer's decoding
// (none when the caller turns it off).
// Needs the Qwen2 tokenizer.json written by the CTest fixture text_qwen_tokenizer.
#include <gtest/gtest.h>

#include "../support/scratch.h"
#include "devtools/random_checkpoint.h"
#include "engine/engine.h"
#include "image/decode.h"

namespace mineru::engine {
namespace {

// MinerU's layout preset (pipeline/sampling_presets.h) spelled out, so that the engine's test
// needs nothing of the pipeline: greedy, no penalties, no-repeat n-gram 100.
SamplingParams LayoutGreedy() {
  SamplingParams p;
  p.temperature = 0.0f;
  p.top_p = 0.01f;
  p.top_k = 1;
  p.no_repeat_ngram_size = 100;
  return p;
}

// The tiny random checkpoint (seed 11) with the Qwen2 tokenizer written to a fresh folder, and
// an engine over it (2 threads, 32 MiB of KV cache); null with a failure recorded.
std::unique_ptr<Engine> TinyEngine(std::string* dir_out = nullptr) {
  const std::string dir = testing_support::TestDir() + "/model";
  ThreadPool pool(2);
  devtools::RandomCheckpointOptions checkpoint_options;
  checkpoint_options.seed = 11;
  checkpoint_options.tokenizer_source = MINERU_QWEN_TOKENIZER;
  auto written =
      devtools::WriteRandomCheckpoint(pool, devtools::TinyModelConfig(), dir, checkpoint_options);
  if (!written) {
    ADD_FAILURE() << written.error().ToString();
    return nullptr;
  }
  auto loaded = model::Model::Load(dir);
  if (!loaded) {
    ADD_FAILURE() << loaded.error().ToString();
    return nullptr;
  }
  EngineOptions options;
  options.threads = 2;
  options.kv_cache_bytes = int64_t{32} << 20;
  options.vision_max_wait = std::chrono::milliseconds(1);
  auto engine =
      Engine::Create(std::shared_ptr<const model::Model>(std::move(*loaded)), dir, options);
  if (!engine) {
    ADD_FAILURE() << engine.error().ToString();
    return nullptr;
  }
  if (dir_out != nullptr) *dir_out = dir;
  return std::move(*engine);
}

TEST(EngineChatTest, MessagesAndRgbImagesEqualReadyIdsAndPixels) {
  std::string dir;
  auto engine = TinyEngine(&dir);
  ASSERT_TRUE(engine);
  ASSERT_NE(engine->tokenizer(), nullptr);

  auto decoded = image::DecodeImageFile(std::string(MINERU_TEST_DATA_DIR) +
                                        "/qwen2vl-tiny/images/doc_400x300.png");
  ASSERT_TRUE(decoded) << decoded.error().ToString();
  const std::vector<text::ChatMessage> messages = {
      {"user", {text::ChatPart::Image({}), text::ChatPart::Text("\nLayout Detection:")}}};

  Request from_chat;
  from_chat.messages = messages;
  ImageInput rgb_image;
  rgb_image.rgb = decoded->image;
  from_chat.images.push_back(std::move(rgb_image));
  from_chat.sampling = LayoutGreedy();
  from_chat.max_new_tokens = 12;
  auto chat_handle = engine->Submit(std::move(from_chat));
  ASSERT_TRUE(chat_handle) << chat_handle.error().ToString();

  // The same request prepared by hand.
  auto processor = image::ReadImageProcessorConfig(dir);
  ASSERT_TRUE(processor);
  auto pixels = image::PreprocessImage(decoded->image, *processor);
  ASSERT_TRUE(pixels);
  std::vector<text::ChatMessage> with_grid = messages;
  with_grid[0].content[0].grid = {pixels->grid.t, pixels->grid.h, pixels->grid.w};
  auto prompt = text::BuildChatPrompt(*engine->tokenizer(), with_grid);
  ASSERT_TRUE(prompt);
  Request ready;
  ready.prompt_ids = prompt->ids;
  ImageInput ready_image;
  ready_image.pixel_values = pixels->values;
  ready_image.grid = {pixels->grid.t, pixels->grid.h, pixels->grid.w};
  ready.images.push_back(std::move(ready_image));
  ready.sampling = LayoutGreedy();
  ready.max_new_tokens = 12;
  auto ready_handle = engine->Submit(std::move(ready));
  ASSERT_TRUE(ready_handle);

  const GenerationResult& a = chat_handle->Wait();
  const GenerationResult& b = ready_handle->Wait();
  ASSERT_NE(a.finish_reason, FinishReason::kError) << a.error;
  EXPECT_EQ(a.ids, b.ids);
  EXPECT_FALSE(a.ids.empty());
  EXPECT_EQ(a.usage.prompt_tokens, static_cast<int64_t>(prompt->ids.size()));
  EXPECT_EQ(a.usage.image_tokens, pixels->grid.patches() / 4);
  auto text = engine->tokenizer()->Decode(a.ids, /*skip_special=*/false);
  ASSERT_TRUE(text);
  EXPECT_EQ(a.text, *text);
  EXPECT_EQ(a.text, b.text);
}

// An output id without a token (the tiny model's embedding has rows past the tokenizer's ids,
// as the real one has 151,936 rows for about 151,665 tokens) is dropped from the text, as Hugging
// Face tokenizers' decode drops it; it used to empty the whole text, so that a block whose answer
// held one such id came out blank in process while a model server answered it.
TEST(EngineChatTest, IdsWithoutATokenAreDroppedFromTheText) {
  auto engine = TinyEngine();
  ASSERT_TRUE(engine);
  const text::Tokenizer& tokenizer = *engine->tokenizer();
  constexpr int32_t kNoToken = 151900;  // past the Qwen2 tokenizer's last id, inside the vocab
  ASSERT_FALSE(tokenizer.IdToToken(kNoToken));
  auto hello = tokenizer.Encode("Hello");
  ASSERT_TRUE(hello && hello->size() == 1);

  // The biased id first; then, as no_repeat_ngram_size 1 bans every id already produced, the
  // next bias wins: the output is [kNoToken, Hello].
  Request request;
  request.messages = {{"user", {text::ChatPart::Text("hi")}}};
  request.sampling.logit_bias = {{kNoToken, 100.0f}, {(*hello)[0], 90.0f}};
  request.sampling.no_repeat_ngram_size = 1;
  request.max_new_tokens = 2;
  request.stop_ids = std::vector<int32_t>{};
  auto handle = engine->Submit(std::move(request));
  ASSERT_TRUE(handle) << handle.error().ToString();
  const GenerationResult& result = handle->Wait();
  ASSERT_EQ(result.ids, (std::vector<int32_t>{kNoToken, (*hello)[0]}));
  EXPECT_EQ(result.text, "Hello");
}

// A caller that builds the text itself (the chat API) turns the engine's decoding off: the same
// ids, no text, so the request is detokenized once.
TEST(EngineChatTest, DecodeTextOffLeavesTheTextToTheCaller) {
  auto engine = TinyEngine();
  ASSERT_TRUE(engine);
  auto hello = engine->tokenizer()->Encode("Hello");
  ASSERT_TRUE(hello && hello->size() == 1);
  const auto submit = [&](bool decode_text) {
    Request request;
    request.messages = {{"user", {text::ChatPart::Text("hi")}}};
    request.sampling.logit_bias = {{(*hello)[0], 100.0f}};
    request.max_new_tokens = 1;
    request.stop_ids = std::vector<int32_t>{};
    request.decode_text = decode_text;
    auto handle = engine->Submit(std::move(request));
    EXPECT_TRUE(handle) << handle.error().ToString();
    return handle ? handle->Wait() : GenerationResult{};
  };
  const GenerationResult decoded = submit(true);
  const GenerationResult left = submit(false);
  ASSERT_EQ(decoded.ids, (std::vector<int32_t>{(*hello)[0]}));
  EXPECT_EQ(decoded.text, "Hello");
  EXPECT_EQ(left.ids, decoded.ids);
  EXPECT_EQ(left.text, "");
}

}  // namespace
}  // namespace mineru::engine
