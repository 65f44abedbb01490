// SPDX-License-Identifier: Apache-2.0
// The client's reading of a chat completion answer (mineru-vl-utils 1.2.1
// get_response_content): TV-46, produced by running the upstream function.
#include "pipeline/chat_answer.h"

#include <gtest/gtest.h>

namespace mineru::pipeline {
namespace {

TEST(ChatAnswerTest, Tv46ResponseHandling) {
  auto stop = ReadChatAnswer(
      R"({"choices":[{"finish_reason":"stop","message":{"content":"abc<|im_end|>"}}]})");
  ASSERT_TRUE(stop) << stop.error().ToString();
  EXPECT_EQ(stop->content, "abc");
  EXPECT_FALSE(stop->truncated);

  auto length =
      ReadChatAnswer(R"({"choices":[{"finish_reason":"length","message":{"content":null}}]})");
  ASSERT_TRUE(length);
  EXPECT_EQ(length->content, "");
  EXPECT_TRUE(length->truncated);  // accepted with a warning

  auto error = ReadChatAnswer(R"({"object":"error","message":"x"})");
  ASSERT_FALSE(error);
  EXPECT_EQ(error.error().code, ErrorCode::kUnavailable);  // ServerError

  auto empty = ReadChatAnswer(R"({"choices":[]})");
  ASSERT_FALSE(empty);
  EXPECT_EQ(empty.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(empty.error().message.find("No choices found in the response."), std::string::npos);

  auto tools =
      ReadChatAnswer(R"({"choices":[{"finish_reason":"tool_calls","message":{"content":"x"}}]})");
  ASSERT_FALSE(tools);
  EXPECT_EQ(tools.error().code, ErrorCode::kInvalidArgument);  // RequestError

  auto no_content = ReadChatAnswer(R"({"choices":[{"finish_reason":"stop","message":{}}]})");
  ASSERT_FALSE(no_content);
  EXPECT_EQ(no_content.error().code, ErrorCode::kUnavailable);
}

TEST(ChatAnswerTest, EdgesOfTheRule) {
  // A null finish reason is a request error; a missing one too.
  EXPECT_EQ(ReadChatAnswer(R"({"choices":[{"finish_reason":null,"message":{"content":"a"}}]})")
                .error()
                .code,
            ErrorCode::kInvalidArgument);
  EXPECT_FALSE(ReadChatAnswer(R"({"choices":[{"message":{"content":"a"}}]})"));
  // One end token is cut, only at the end, and only the configured one.
  EXPECT_EQ(ReadChatAnswer(R"({"choices":[{"finish_reason":"stop","message":{"content":)"
                           R"("a<|im_end|><|im_end|>"}}]})")
                ->content,
            "a<|im_end|>");
  EXPECT_EQ(ReadChatAnswer(R"({"choices":[{"finish_reason":"stop","message":{"content":)"
                           R"("<|im_end|>a"}}]})")
                ->content,
            "<|im_end|>a");
  EXPECT_EQ(ReadChatAnswer(
                R"({"choices":[{"finish_reason":"stop","message":{"content":"a</s>"}}]})", "</s>")
                ->content,
            "a");
  EXPECT_EQ(ReadChatAnswer(R"({"choices":[{"finish_reason":"stop","message":{"content":)"
                           R"("a<|im_end|>"}}]})",
                           "")
                ->content,
            "a<|im_end|>");
  // Not an object, not JSON, a content of the wrong type: server errors, never a throw.
  for (std::string_view body : {"[]", "", "{", R"({"choices":"x"})", R"({"choices":[1]})",
                                R"({"choices":[{"finish_reason":"stop","message":{"content":1}}]})",
                                R"({"choices":[{"finish_reason":"stop","message":"x"}]})"}) {
    auto r = ReadChatAnswer(body);
    ASSERT_FALSE(r) << body;
    EXPECT_EQ(r.error().code, ErrorCode::kUnavailable) << body;
  }
}

// Usage is read when its counts are non-negative integers, and absent otherwise (never an
// error: the client does not look at it).
TEST(ChatAnswerTest, UsageIsReadWhenWellFormed) {
  auto read = [](std::string_view usage) {
    return ReadChatAnswer(std::string(R"({"choices":[{"finish_reason":"stop","message":)") +
                          R"({"content":"a"}}],"usage":)" + std::string(usage) + "}");
  };
  auto good = read(R"({"prompt_tokens":12,"completion_tokens":3,"total_tokens":15})");
  ASSERT_TRUE(good);
  EXPECT_EQ(good->prompt_tokens, 12);
  EXPECT_EQ(good->completion_tokens, 3);
  for (std::string_view bad : {R"({"prompt_tokens":-1,"completion_tokens":"3"})", "null", "[]",
                               R"({"prompt_tokens":1.5})"}) {
    auto r = read(bad);
    ASSERT_TRUE(r) << bad;
    EXPECT_FALSE(r->prompt_tokens) << bad;
    EXPECT_FALSE(r->completion_tokens) << bad;
  }
  auto none = ReadChatAnswer(R"({"choices":[{"finish_reason":"stop","message":{"content":"a"}}]})");
  ASSERT_TRUE(none);
  EXPECT_FALSE(none->completion_tokens);
}

}  // namespace
}  // namespace mineru::pipeline
