// SPDX-License-Identifier: Apache-2.0
#include "base/json.h"

#include <gtest/gtest.h>

#include <string>

namespace mineru {
namespace {

TEST(JsonTest, ParsesAndReadsTypedFields) {
  auto json = ParseJson(R"({"a": 3, "b": 2.0, "c": "x", "d": [1, 2], "e": true})", "t.json");
  ASSERT_TRUE(json) << json.error().ToString();
  EXPECT_EQ(FindInt(*json, "a", "t.json").value(), 3);
  EXPECT_EQ(FindInt(*json, "b", "t.json").value(), 2);  // integral float accepted
  EXPECT_FALSE(FindInt(*json, "missing", "t.json").value().has_value());
  EXPECT_EQ(FindString(*json, "c", "t.json").value(), "x");
  EXPECT_EQ(FindIntArray(*json, "d", "t.json").value(), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(FindBool(*json, "e", "t.json").value(), true);
}

TEST(JsonTest, WrongTypeNamesTheField) {
  auto json = ParseJson(R"({"hidden_size": "big"})", "config.json");
  ASSERT_TRUE(json);
  auto value = FindInt(*json, "hidden_size", "config.json");
  ASSERT_FALSE(value);
  EXPECT_NE(value.error().message.find("'hidden_size' must be an integer"), std::string::npos);
  EXPECT_FALSE(FindInt(*ParseJson(R"({"x": 2.5})", "t"), "x", "t"));
}

TEST(JsonTest, InvalidJsonIsAnError) {
  auto json = ParseJson("{\"a\": ", "broken.json");
  ASSERT_FALSE(json);
  EXPECT_EQ(json.error().code, ErrorCode::kCorrupt);
  EXPECT_NE(json.error().message.find("broken.json"), std::string::npos);
}

TEST(JsonTest, DepthLimitBoundary) {
  // kJsonMaxDepth levels parse; one more is refused.
  const std::string ok = std::string(kJsonMaxDepth, '[') + std::string(kJsonMaxDepth, ']');
  EXPECT_TRUE(ParseJson(ok, "ok"));
  const std::string deep =
      std::string(kJsonMaxDepth + 1, '[') + std::string(kJsonMaxDepth + 1, ']');
  auto json = ParseJson(deep, "deep");
  ASSERT_FALSE(json);
  EXPECT_EQ(json.error().code, ErrorCode::kResourceExhausted);
  // A smaller limit given by the caller.
  EXPECT_TRUE(ParseJson("[[[]]]", "three", 3));
  EXPECT_FALSE(ParseJson("[[[[]]]]", "four", 3));
  // 100k levels: refused, no stack overflow.
  EXPECT_FALSE(ParseJson(std::string(100000, '['), "very deep"));
}

}  // namespace
}  // namespace mineru
