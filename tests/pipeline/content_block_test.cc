// SPDX-License-Identifier: Apache-2.0
#include "pipeline/content_block.h"

#include <gtest/gtest.h>

namespace mineru::pipeline {
namespace {

TEST(ContentBlockTest, EveryTypeNameRoundTrips) {
  for (int i = 0; i < kBlockTypeCount; ++i) {
    const auto type = static_cast<BlockType>(i);
    EXPECT_EQ(ParseBlockType(BlockTypeName(type)), type) << BlockTypeName(type);
  }
  EXPECT_EQ(BlockTypeName(BlockType::kTableCaption), "table_caption");
  EXPECT_EQ(ParseBlockType("equation_block"), BlockType::kEquationBlock);
  EXPECT_FALSE(ParseBlockType("Text"));  // labels are lower-cased before lookup
  EXPECT_FALSE(ParseBlockType("inline_formula"));
  EXPECT_FALSE(ParseBlockType(""));
}

}  // namespace
}  // namespace mineru::pipeline
