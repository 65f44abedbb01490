// SPDX-License-Identifier: Apache-2.0
#include "pipeline/chat_answer.h"

#include "base/json.h"

namespace mineru::pipeline {

Result<ChatAnswer> ReadChatAnswer(std::string_view body, std::string_view end_token) {
  const Json json = ParseJson(body, "answer").value_or(Json());
  if (!json.is_object()) {
    return Fail(ErrorCode::kUnavailable, "server error: the answer is not a JSON object");
  }
  if (auto object = json.find("object"); object != json.end() && *object == "error") {
    auto message = json.find("message");
    return Fail(
        ErrorCode::kUnavailable, "server error: {}",
        message != json.end() && message->is_string() ? message->get<std::string>() : json.dump());
  }
  auto choices = json.find("choices");
  if (choices == json.end() || !choices->is_array() || choices->empty()) {
    return Fail(ErrorCode::kUnavailable, "server error: No choices found in the response.");
  }
  const Json& choice = (*choices)[0];
  if (!choice.is_object()) {
    return Fail(ErrorCode::kUnavailable, "server error: the first choice is not an object");
  }
  auto finish = choice.find("finish_reason");
  const std::string reason =
      finish != choice.end() && finish->is_string() ? finish->get<std::string>() : "";
  if (reason != "stop" && reason != "length") {
    return Fail(ErrorCode::kInvalidArgument, "request error: finish_reason {}",
                finish == choice.end() ? "missing" : finish->dump());
  }
  auto message = choice.find("message");
  if (message == choice.end() || !message->is_object()) {
    return Fail(ErrorCode::kUnavailable, "server error: the choice has no message");
  }
  auto content = message->find("content");
  if (content == message->end() || !(content->is_string() || content->is_null())) {
    return Fail(ErrorCode::kUnavailable, "server error: the message has no content");
  }
  ChatAnswer answer;
  answer.truncated = reason == "length";
  if (auto usage = json.find("usage"); usage != json.end() && usage->is_object()) {
    auto count = [&](const char* key) -> std::optional<int64_t> {
      auto it = usage->find(key);
      if (it == usage->end() || !it->is_number_integer() || it->get<int64_t>() < 0) {
        return std::nullopt;
      }
      return it->get<int64_t>();
    };
    answer.prompt_tokens = count("prompt_tokens");
    answer.completion_tokens = count("completion_tokens");
  }
  if (content->is_string()) answer.content = content->get<std::string>();
  if (!end_token.empty() && std::string_view(answer.content).ends_with(end_token)) {
    answer.content.resize(answer.content.size() - end_token.size());
  }
  return answer;
}

}  // namespace mineru::pipeline
