// SPDX-License-Identifier: Apache-2.0
// Streamed containers (base/json.h, JsonStream): what the stream receives is what the tree would
// have held, the tree keeps the container empty, the limits count streamed children as if the
// tree held them, and a repeated path or a refusing sink stops the parse.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "base/json.h"

namespace mineru {
namespace {

struct Received {
  size_t path;
  std::string key;
  Json value;
};

Result<Json> ParseStreaming(std::string_view text, std::vector<Received>& out,
                            const JsonLimits& limits = JsonFileLimits()) {
  const JsonStream stream{{{"model", "vocab"}, {"model", "merges"}},
                          [&](size_t path, std::string&& key, Json&& value) {
                            out.push_back({path, std::move(key), std::move(value)});
                            return OkStatus();
                          }};
  return ParseJson(text, "t.json", limits, stream);
}

constexpr char kDoc[] = R"({"version": "1.0",
  "model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2, "long token name here": 3},
            "merges": ["a b", ["ab", "b"], {"x": [1, 2]}]},
  "other": {"vocab": {"not": "streamed"}}})";

TEST(JsonStreamTest, ChildrenAreTheTreesChildrenInOrderAndTheTreeKeepsEmptyContainers) {
  std::vector<Received> got;
  auto streamed = ParseStreaming(kDoc, got);
  ASSERT_TRUE(streamed) << streamed.error().ToString();
  auto tree = ParseJson(kDoc, "t.json", JsonFileLimits());
  ASSERT_TRUE(tree);
  // Document order (a tree's object is sorted by key).
  std::vector<Received> want;
  for (const char* key : {"a", "b", "ab", "long token name here"}) {
    want.push_back({0, key, (*tree)["model"]["vocab"][key]});
  }
  for (const Json& merge : (*tree)["model"]["merges"]) want.push_back({1, "", merge});
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].path, want[i].path) << i;
    EXPECT_EQ(got[i].key, want[i].key) << i;
    EXPECT_EQ(got[i].value, want[i].value) << i;
  }
  Json expected = *tree;
  expected["model"]["vocab"] = Json::object();
  expected["model"]["merges"] = Json::array();
  EXPECT_EQ(*streamed, expected);  // "other.vocab" is not a stream path: built as usual
}

TEST(JsonStreamTest, AStreamPathHoldingAScalarStaysInTheTree) {
  std::vector<Received> got;
  auto parsed = ParseStreaming(R"({"model": {"vocab": 7, "merges": []}})", got);
  ASSERT_TRUE(parsed);
  EXPECT_EQ((*parsed)["model"]["vocab"], 7);
  EXPECT_TRUE(got.empty());
}

TEST(JsonStreamTest, StreamedChildrenCountAgainstTheLimits) {
  // {"model":{"vocab":{"a":0,"b":1}}} holds 9 values (3 objects, 4 keys, 2 numbers), streamed
  // or not.
  const std::string doc = R"({"model":{"vocab":{"a":0,"b":1}}})";
  JsonLimits limits;
  limits.max_values = 9;
  std::vector<Received> got;
  EXPECT_TRUE(ParseStreaming(doc, got, limits));
  EXPECT_TRUE(ParseJson(doc, "t", limits));
  limits.max_values = 8;
  got.clear();
  auto refused = ParseStreaming(doc, got, limits);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, ErrorCode::kResourceExhausted);
  EXPECT_NE(refused.error().message.find("max_values"), std::string::npos);
  // Depth inside a streamed child counts from the root: the strings of [["a","b"]] are at 4.
  limits = JsonFileLimits(5);
  EXPECT_TRUE(ParseStreaming(R"({"model":{"merges":[["a","b"]]}})", got, limits));
  EXPECT_FALSE(ParseStreaming(R"({"model":{"merges":[[["a"]]]}})", got, limits));
}

TEST(JsonStreamTest, ARepeatedPathIsRefused) {
  std::vector<Received> got;
  auto twice = ParseStreaming(R"({"model": {"vocab": {"a": 0}, "vocab": {"b": 1}}})", got);
  ASSERT_FALSE(twice);
  EXPECT_EQ(twice.error().code, ErrorCode::kCorrupt);
  EXPECT_NE(twice.error().message.find("t.json: 'model.vocab' appears twice"), std::string::npos)
      << twice.error().message;
}

TEST(JsonStreamTest, TheSinksErrorStopsTheParse) {
  int calls = 0;
  const JsonStream stream{{{"list"}}, [&](size_t, std::string&&, Json&& value) -> Status {
                            ++calls;
                            if (value == 2) return Fail(ErrorCode::kCorrupt, "t: two is refused");
                            return OkStatus();
                          }};
  auto parsed = ParseJson(R"({"list": [1, 2, 3]})", "t", JsonFileLimits(), stream);
  ASSERT_FALSE(parsed);
  EXPECT_EQ(parsed.error().message, "t: two is refused");
  EXPECT_EQ(calls, 2);
}

TEST(JsonStreamTest, SyntaxErrorsInsideAStreamedContainerAreErrors) {
  std::vector<Received> got;
  auto broken = ParseStreaming(R"({"model": {"vocab": {"a": 0, "b": }}})", got);
  ASSERT_FALSE(broken);
  EXPECT_EQ(broken.error().code, ErrorCode::kCorrupt);
}

}  // namespace
}  // namespace mineru
