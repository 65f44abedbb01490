// SPDX-License-Identifier: Apache-2.0
// The error shape: every body carries a string code (before, "code" was null unless a caller
// named one, and the server's own errors sent the status number), a permanent limit is 413
// without Retry-After (before, every kResourceExhausted was 429 with Retry-After, so a client
// honouring it retried a document that can never pass), and no message keeps a server path.
#include "service/api_error.h"

#include <gtest/gtest.h>

#include "base/json.h"

namespace mineru::service {
namespace {

Json ErrorOf(const HttpResponse& r) {
  Json json = Json::parse(r.body, nullptr, /*allow_exceptions=*/false);
  EXPECT_EQ(json.value("object", ""), "error") << r.body;
  return json.contains("error") ? json["error"] : Json();
}

TEST(ApiErrorTest, EveryStatusHasAStableCode) {
  const std::vector<std::pair<int, std::string>> table = {{400, "invalid_request"},
                                                          {401, "unauthorized"},
                                                          {403, "forbidden"},
                                                          {404, "not_found"},
                                                          {405, "method_not_allowed"},
                                                          {408, "request_timeout"},
                                                          {409, "conflict"},
                                                          {411, "length_required"},
                                                          {413, "limit_exceeded"},
                                                          {415, "unsupported_media_type"},
                                                          {417, "expectation_failed"},
                                                          {422, "invalid_request"},
                                                          {429, "rate_limit_exceeded"},
                                                          {431, "header_too_large"},
                                                          {499, "client_closed"},
                                                          {500, "internal_error"},
                                                          {501, "not_implemented"},
                                                          {503, "service_unavailable"},
                                                          {504, "request_timeout"},
                                                          {418, "invalid_request"},
                                                          {502, "internal_error"}};
  for (const auto& [status, code] : table) {
    EXPECT_EQ(DefaultErrorCode(status), code) << status;
    const Json e = ErrorOf(ApiError(status, "m", "invalid_request_error"));
    ASSERT_TRUE(e["code"].is_string()) << status;
    EXPECT_EQ(e["code"], code) << status;
  }
}

TEST(ApiErrorTest, NamedCodesAndSpecificTypesWin) {
  EXPECT_EQ(ErrorOf(ApiError(404, "m", "invalid_request_error", "model_not_found"))["code"],
            "model_not_found");
  EXPECT_EQ(ErrorOf(ApiError(413, "m", "invalid_request_error", "max_task_files"))["code"],
            "max_task_files");
  EXPECT_EQ(ErrorOf(ApiError(409, "m", "task_failed"))["code"], "task_failed");
  EXPECT_EQ(ErrorCodeFor(503, "server_overloaded"), "server_overloaded");
  EXPECT_EQ(ErrorCodeFor(503, "unavailable_error"), "service_unavailable");
  // Bodies without a status (stream events) take the code of their type.
  for (const auto& [type, code] : std::vector<std::pair<std::string, std::string>>{
           {"server_error", "internal_error"},
           {"not_found_error", "not_found"},
           {"invalid_request_error", "invalid_request"},
           {"timeout_error", "request_timeout"},
           {"rate_limit_error", "rate_limit_exceeded"},
           {"task_cancelled", "task_cancelled"}}) {
    const Json body = Json::parse(ApiErrorBody("m", type), nullptr, false);
    EXPECT_EQ(body["error"]["code"], code) << type;
    EXPECT_TRUE(body["error"]["param"].is_null()) << type;
  }
  EXPECT_EQ(Json::parse(ApiErrorBody("m", "server_error", "", "messages"), nullptr,
                        false)["error"]["param"],
            "messages");
}

TEST(ApiErrorTest, LowerLayerErrorsMapToPermanentOrPassingAnswers) {
  struct Case {
    ErrorCode code;
    int status;
    std::string api_code;
    bool retry_after;
  };
  for (const Case& c : std::vector<Case>{
           {ErrorCode::kInvalidArgument, 400, "invalid_request", false},
           {ErrorCode::kCorrupt, 400, "invalid_request", false},
           {ErrorCode::kUnsupported, 400, "invalid_request", false},
           {ErrorCode::kNotFound, 404, "not_found", false},
           // A named limit is permanent: 413, no Retry-After (it was 429 + Retry-After).
           {ErrorCode::kResourceExhausted, 413, "limit_exceeded", false},
           {ErrorCode::kUnavailable, 503, "service_unavailable", true},
           {ErrorCode::kCancelled, 409, "conflict", false},
           {ErrorCode::kIo, 500, "internal_error", false},
           {ErrorCode::kInternal, 500, "internal_error", false}}) {
    const HttpResponse r = ApiErrorFor(Error{c.code, "12 pages exceed --max-pages 10"});
    EXPECT_EQ(r.status, c.status) << ErrorCodeName(c.code);
    EXPECT_EQ(ErrorOf(r)["code"], c.api_code) << ErrorCodeName(c.code);
    EXPECT_EQ(r.headers.count("Retry-After") == 1, c.retry_after) << ErrorCodeName(c.code);
  }
  EXPECT_EQ(ApiError(429, "m", "rate_limit_error").headers.at("Retry-After"), "1");
}

TEST(ApiErrorTest, ServerPathsAreCutToTheirLastComponent) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"Failed to process file: a.pdf: /var/lib/mineru/tasks/0f3c/input/a.pdf: damaged PDF",
       "Failed to process file: a.pdf: a.pdf: damaged PDF"},
      {"/srv/models/MinerU2.5/model.safetensors: header too large",
       "model.safetensors: header too large"},
      {"cannot create ['/tmp/mineru-cpp-1/out/'] (denied)", "cannot create ['out'] (denied)"},
      {"filesystem error: cannot create directories: No space left [/srv/mineru/x]",
       "filesystem error: cannot create directories: No space left [x]"},
      {"--model=/home/me/ckpt/dir failed", "--model=dir failed"},
      {"(/a/b) and \"/c/d/e.png\"", "(b) and \"e.png\""},
      // Not paths: URLs, media types, a lone slash, one component, fractions.
      {"http://127.0.0.1:8000/a/b.png: not fetched", "http://127.0.0.1:8000/a/b.png: not fetched"},
      {"file:///etc/passwd is never fetched", "file:///etc/passwd is never fetched"},
      {"data:image/png;base64 and application/json", "data:image/png;base64 and application/json"},
      {"a / b, /tasks, 3/4, //", "a / b, /tasks, 3/4, //"},
      {"", ""}};
  for (const auto& [in, out] : cases) EXPECT_EQ(WithoutServerPaths(in), out) << in;
  // The message of every body goes through it.
  const Json e =
      ErrorOf(ApiErrorFor(Error{ErrorCode::kIo, "/srv/mineru/tasks/1/input: cannot create"}));
  EXPECT_EQ(e["message"], "input: cannot create");
  const Json body = Json::parse(ApiErrorBody("/a/b/c.pdf: bad", "server_error"), nullptr, false);
  EXPECT_EQ(body["error"]["message"], "c.pdf: bad");
}

TEST(ApiErrorTest, LongTextsAreCutInOnePass) {
  // Many paths and many slashes: linear (the test timeout is the guard).
  std::string text;
  for (int i = 0; i < 200'000; ++i) text += " /a/b/c";
  text += " " + std::string(1'000'000, '/');  // one token of slashes only: kept
  const std::string out = WithoutServerPaths(text);
  EXPECT_EQ(out.substr(0, 6), " c c c");
  EXPECT_EQ(out.size(), 200'000u * 2 + 1 + 1'000'000u);
}

}  // namespace
}  // namespace mineru::service
