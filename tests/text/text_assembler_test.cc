// SPDX-License-Identifier: Apache-2.0
// The incremental detokenizer (text/text_assembler.h) on the Qwen2 tokenizer: the text a
// generation's ids become with and without special tokens, ids past the vocabulary dropped, and
// a character split across ids released only when complete.
#include "text/text_assembler.h"

#include <gtest/gtest.h>

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "text/tokenizer.h"

namespace mineru::text {
namespace {

class TextAssemblerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto loaded = Tokenizer::Load(MINERU_QWEN_TOKENIZER);
    ASSERT_TRUE(loaded) << loaded.error().ToString();
    tokenizer_ = std::move(*loaded).release();
  }
  static void TearDownTestSuite() {
    delete tokenizer_;
    tokenizer_ = nullptr;
  }
  void SetUp() override { ASSERT_NE(tokenizer_, nullptr); }

  static std::string Assemble(const std::vector<int32_t>& ids, bool skip_special) {
    TextAssembler text(*tokenizer_, skip_special, {});
    for (int32_t id : ids) text.Add(std::span(&id, 1));
    text.Finish();
    return text.text();
  }
  static int32_t Id(std::string_view token) { return tokenizer_->TokenToId(token).value_or(-1); }

  static inline Tokenizer* tokenizer_ = nullptr;
};

TEST_F(TextAssemblerTest, SpecialTokensAreKeptUnlessSkipped) {
  // A layout line as the model writes it: <|box_start|>... <|box_end|><|ref_start|>...
  auto ids = tokenizer_->Encode("<|box_start|>100 200 300 400<|box_end|>text<|im_end|>");
  ASSERT_TRUE(ids) << ids.error().ToString();
  ASSERT_EQ(ids->front(), Id("<|box_start|>"));
  EXPECT_EQ(Assemble(*ids, false), "<|box_start|>100 200 300 400<|box_end|>text<|im_end|>");
  EXPECT_EQ(Assemble(*ids, true), "100 200 300 400text");
  // A non-special added token stays either way.
  const int32_t think = Id("<think>");
  ASSERT_GE(think, 0);
  ASSERT_FALSE(tokenizer_->IsSpecial(think));
  EXPECT_EQ(Assemble({think}, true), "<think>");
  // Ids past the tokenizer (padding rows of the embedding) become nothing.
  EXPECT_EQ(Assemble({tokenizer_->id_limit() + 5, Id("<|box_end|>")}, false), "<|box_end|>");
}

TEST_F(TextAssemblerTest, SplitCharacterIsHeldUntilComplete) {
  auto ids = tokenizer_->Encode("\xE4\xB8\xAD\xE6\x96\x87");  // two CJK characters
  ASSERT_TRUE(ids);
  TextAssembler text(*tokenizer_, false, {});
  std::string streamed;
  for (int32_t id : *ids) {
    text.Add(std::span(&id, 1));
    streamed += text.TakeDelta();
  }
  text.Finish();
  streamed += text.TakeDelta();
  EXPECT_EQ(streamed, "\xE4\xB8\xAD\xE6\x96\x87");
}

}  // namespace
}  // namespace mineru::text
