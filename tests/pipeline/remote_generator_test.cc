// SPDX-License-Identifier: Apache-2.0
// RemoteGenerator against a scripted stand-in model server (model_server_stub.h), the answers
// and what is sent: the answer's text with one trailing end token cut, its usage, finish_reason
// "length" kept as truncated, the answers MinerU's client refuses (TV-46); the request as
// MinerU's http client posts it (TV-45: headers, key order, sampling numbers, the crop as a PNG
// data URL whose pixels are the crop's, priority and token limits only when set, text-only
// requests), one keep-alive connection for sequential requests, and what Create and Submit
// refuse.
#include "pipeline/remote_generator.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "../support/subprocess.h"
#include "image/data_url.h"
#include "image/decode.h"
#include "remote_generator_fixture.h"

namespace mineru::pipeline::testing {
namespace {

// `object[key]`, null when absent (no assertion, no exception on a missing key).
Json Field(const Json& object, const std::string& key) {
  if (!object.is_object()) return Json();
  auto it = object.find(key);
  return it == object.end() ? Json() : *it;
}

// The one chat request the stub received (a failure when it received another number).
StubRequest OnlyChatRequest(const ModelServerStub& stub) {
  std::vector<StubRequest> received = stub.ChatReceived();
  EXPECT_EQ(received.size(), 1u);
  return received.empty() ? StubRequest{} : received.front();
}

TEST_F(RemoteGeneratorTest, AnswerTextHasTheEndTokenCutAndUsageRead) {
  ASSERT_TRUE(StartStub(R"([
      {"do": "answer", "content": "echo:{prompt}<|im_end|>",
       "usage": {"prompt_tokens": 40, "completion_tokens": 7, "total_tokens": 47}},
      {"do": "answer", "content": "plain {prompt}"}])"))
      << kStubDidNotStart;
  auto generator = Make(Options());
  ASSERT_NE(generator, nullptr);

  engine::GenerationResult first = Generate(*generator, CropRequest("\nText Recognition:"));
  EXPECT_EQ(first.finish_reason, FinishReason::kStop) << first.error;
  EXPECT_EQ(first.text, "echo:\nText Recognition:");
  EXPECT_TRUE(first.error.empty()) << first.error;
  EXPECT_EQ(first.usage.prompt_tokens, 40);
  EXPECT_EQ(first.usage.completion_tokens, 7);
  EXPECT_EQ(first.retries, 0);

  // No usage in the answer: none made up.
  engine::GenerationResult second = Generate(*generator, CropRequest("two"));
  EXPECT_EQ(second.finish_reason, FinishReason::kStop) << second.error;
  EXPECT_EQ(second.text, "plain two");
  EXPECT_EQ(second.usage.prompt_tokens, 0);
  EXPECT_EQ(second.usage.completion_tokens, 0);
  EXPECT_EQ(stub_.ChatRequests(), 2);
}

TEST_F(RemoteGeneratorTest, EndTokenIsCutOnceAndNotAtAllWhenEmpty) {
  ASSERT_TRUE(StartStub(R"([{"do": "answer", "content": "a<|im_end|><|im_end|>"}])"))
      << kStubDidNotStart;
  auto cutting = Make(Options());
  ASSERT_NE(cutting, nullptr);
  EXPECT_EQ(Generate(*cutting, CropRequest("x")).text, "a<|im_end|>");

  RemoteGeneratorOptions options = Options();
  options.server.end_token = "";
  auto keeping = Make(options);
  ASSERT_NE(keeping, nullptr);
  EXPECT_EQ(Generate(*keeping, CropRequest("x")).text, "a<|im_end|><|im_end|>");
}

TEST_F(RemoteGeneratorTest, FinishReasonLengthKeepsTheTextAsTruncated) {
  ASSERT_TRUE(StartStub(R"([
      {"do": "answer", "content": "<table><tr><td>cut", "finish_reason": "length"},
      {"do": "answer", "content": null, "finish_reason": "length"}])"))
      << kStubDidNotStart;
  auto generator = Make(Options());
  ASSERT_NE(generator, nullptr);

  engine::GenerationResult cut = Generate(*generator, CropRequest("\nTable Recognition:"));
  EXPECT_EQ(cut.finish_reason, FinishReason::kLength) << cut.error;
  EXPECT_EQ(cut.text, "<table><tr><td>cut");
  EXPECT_EQ(cut.retries, 0);
  // TV-46: null content with "length" reads as "".
  engine::GenerationResult empty = Generate(*generator, CropRequest("\nTable Recognition:"));
  EXPECT_EQ(empty.finish_reason, FinishReason::kLength) << empty.error;
  EXPECT_EQ(empty.text, "");

  EXPECT_EQ(stub_.ChatRequests(), 2);  // a truncated answer is not asked again
  ASSERT_TRUE(
      WaitForStats(*generator, [](const RemoteGeneratorStats& s) { return s.succeeded == 2; }));
  EXPECT_EQ(generator->Stats().truncated, 2);
  EXPECT_EQ(generator->Stats().failed, 0);
}

// Answers that arrived whole but that MinerU's client refuses are errors, and are not asked
// again (the server would answer the same).
TEST_F(RemoteGeneratorTest, AnswersTheClientRefusesFailWithoutRetry) {
  struct Case {
    const char* action;
    const char* error_part;  // what the error names; empty: anything
  };
  const std::vector<Case> cases = {
      {R"({"do": "answer", "finish_reason": "tool_calls"})", "tool_calls"},
      {R"({"do": "answer", "finish_reason": null})", ""},
      {R"({"do": "status", "status": 200, "body": "{\"object\": \"error\", \"message\": \"x\"}"})",
       ""},
      {R"({"do": "status", "status": 200, "body": "{\"choices\": []}"})", "No choices"},
      {R"({"do": "status", "status": 200,
           "body": "{\"choices\": [{\"finish_reason\": \"stop\", \"message\": {}}]}"})",
       ""},
      {R"({"do": "status", "status": 200, "body": "[1, 2]"})", ""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.action);
    // The refused answer, then one that would succeed if the request were (wrongly) retried.
    ASSERT_TRUE(StartStub(std::string("[") + c.action + R"(, {"do": "answer"}])"))
        << kStubDidNotStart;
    auto generator = Make(Options());
    ASSERT_NE(generator, nullptr);
    engine::GenerationResult result = Generate(*generator, CropRequest("x"));
    EXPECT_EQ(result.finish_reason, FinishReason::kError);
    EXPECT_FALSE(result.error.empty());
    EXPECT_NE(result.error.find(c.error_part), std::string::npos) << result.error;
    EXPECT_EQ(result.retries, 0);
    EXPECT_EQ(stub_.ChatRequests(), 1);
    generator.reset();
    stub_.Stop();
  }
}

TEST_F(RemoteGeneratorTest, AnswerOverTheByteLimitFailsWithoutRetry) {
  ASSERT_TRUE(StartStub(std::string(R"([{"do": "answer", "content": ")") + std::string(4000, 'x') +
                        R"("}, {"do": "answer"}])"))
      << kStubDidNotStart;
  RemoteGeneratorOptions options = Options();
  options.server.max_answer_bytes = 1024;
  auto generator = Make(options);
  ASSERT_NE(generator, nullptr);
  engine::GenerationResult result = Generate(*generator, CropRequest("x"));
  EXPECT_EQ(result.finish_reason, FinishReason::kError);
  EXPECT_EQ(result.retries, 0);
  EXPECT_EQ(stub_.ChatRequests(), 1);
}

// The boundary of max_answer_bytes (--model-server-max-answer-bytes): an answer of exactly the
// limit is read, one byte more fails naming the flag.
TEST_F(RemoteGeneratorTest, AnswerOfExactlyTheByteLimitIsReadAndOneMoreIsNot) {
  const std::string body = R"({"choices": [{"finish_reason": "stop", "message": {"content": ")" +
                           std::string(1000, 'y') + R"("}}]})";
  const Json action{{"do", "status"}, {"status", 200}, {"body", body}};
  ASSERT_TRUE(StartStub(Json::array({action}).dump())) << kStubDidNotStart;
  for (const uint64_t limit : {uint64_t{body.size()}, uint64_t{body.size() - 1}}) {
    RemoteGeneratorOptions options = Options();
    options.server.max_answer_bytes = limit;
    auto generator = Make(options);
    ASSERT_NE(generator, nullptr);
    const engine::GenerationResult result = Generate(*generator, CropRequest("x"));
    if (limit == body.size()) {
      EXPECT_EQ(result.finish_reason, FinishReason::kStop) << result.error;
      EXPECT_EQ(result.text, std::string(1000, 'y'));
    } else {
      EXPECT_EQ(result.finish_reason, FinishReason::kError);
      EXPECT_NE(result.error.find("--model-server-max-answer-bytes"), std::string::npos)
          << result.error;
      EXPECT_EQ(result.retries, 0);
    }
  }
}

// HTTPS: a server whose certificate the given authorities sign is answered; without them (the
// system's store does not know this self-signed one) the request fails at once, not retried.
TEST_F(RemoteGeneratorTest, HttpsServerIsCheckedAgainstTheGivenAuthorities) {
  const std::string dir = testing_support::TestDir();
  const std::string pem = dir + "/server.pem";
  const testing_support::ProcessResult made = testing_support::RunProcess(
      {"openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj",
       "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", dir + "/key.pem",
       "-out", dir + "/cert.pem"});
  ASSERT_TRUE(made.exited && made.exit_code == 0) << testing_support::Describe(made);
  testing_support::WriteFile(pem, testing_support::ReadFile(dir + "/cert.pem") +
                                      testing_support::ReadFile(dir + "/key.pem"));
  ASSERT_TRUE(stub_.Start(R"([{"do": "answer", "content": "over tls"}])",
                          ModelServerStub::kDefaultModels, pem))
      << kStubDidNotStart;
  for (const bool trusted : {true, false}) {
    SCOPED_TRACE(trusted);
    RemoteGeneratorOptions options = Options();
    options.server.url = "https://127.0.0.1:" + std::to_string(stub_.port());
    if (trusted) options.server.ca_file = dir + "/cert.pem";
    auto generator = Make(options);
    ASSERT_NE(generator, nullptr);
    const engine::GenerationResult result = Generate(*generator, CropRequest("x"));
    if (trusted) {
      EXPECT_EQ(result.finish_reason, FinishReason::kStop) << result.error;
      EXPECT_EQ(result.text, "over tls");
    } else {
      EXPECT_EQ(result.finish_reason, FinishReason::kError);
      EXPECT_NE(result.error.find("certificate"), std::string::npos) << result.error;
      EXPECT_EQ(result.retries, 0);
    }
  }
}

// TV-45: the body MinerU's http client posts, key for key and in its order.
TEST_F(RemoteGeneratorTest, PostsTheClientsBodyWithTheBearerKey) {
  ASSERT_TRUE(StartStub(R"([{"do": "answer"}])")) << kStubDidNotStart;
  RemoteGeneratorOptions options = Options();
  options.server.api_key = "sekrit-key";
  auto generator = Make(options);
  ASSERT_NE(generator, nullptr);
  engine::Request request = CropRequest("\nTable Recognition:");
  request.max_new_tokens = 4096;
  EXPECT_EQ(Generate(*generator, std::move(request)).finish_reason, FinishReason::kStop);

  const StubRequest posted = OnlyChatRequest(stub_);
  EXPECT_EQ(posted.method, "POST");
  EXPECT_EQ(posted.path, "/v1/chat/completions");
  EXPECT_EQ(posted.headers.count("authorization"), 1u);
  if (posted.headers.count("authorization")) {
    EXPECT_EQ(posted.headers.at("authorization"), "Bearer sekrit-key");
  }
  ASSERT_EQ(posted.headers.count("content-type"), 1u);
  EXPECT_EQ(posted.headers.at("content-type").rfind("application/json", 0), 0u);

  const Json& body = posted.json;
  ASSERT_TRUE(body.is_object()) << posted.body.substr(0, 200);
  EXPECT_EQ(Field(body, "model"), Json("stub-model"));
  const Json messages = Field(body, "messages");
  ASSERT_TRUE(messages.is_array() && messages.size() == 2) << messages.dump().substr(0, 200);
  EXPECT_EQ(Field(messages[0], "role"), Json("system"));
  EXPECT_EQ(Field(messages[0], "content"), Json("You are a helpful assistant."));
  EXPECT_EQ(Field(messages[1], "role"), Json("user"));
  const Json parts = Field(messages[1], "content");
  ASSERT_TRUE(parts.is_array() && parts.size() == 2) << parts.dump().substr(0, 200);
  EXPECT_EQ(Field(parts[0], "type"), Json("image_url"));
  EXPECT_EQ(parts[1], Json({{"type", "text"}, {"text", "\nTable Recognition:"}}));

  // The crop as a PNG data URL holding the very pixels sent.
  const Json url = Field(Field(parts[0], "image_url"), "url");
  ASSERT_TRUE(url.is_string());
  EXPECT_EQ(url.get<std::string>().rfind("data:image/png;base64,", 0), 0u);
  auto data = image::ParseDataUrl(url.get<std::string>(), uint64_t{1} << 20);
  ASSERT_TRUE(data) << data.error().ToString();
  EXPECT_EQ(data->mime_type, "image/png");
  auto decoded = image::DecodeImage(data->bytes);
  ASSERT_TRUE(decoded) << decoded.error().ToString();
  EXPECT_EQ(decoded->format, image::ImageFormat::kPng);
  EXPECT_EQ(decoded->image.width, TestCrop().width);
  EXPECT_EQ(decoded->image.height, TestCrop().height);
  EXPECT_EQ(decoded->image.pixels, TestCrop().pixels);

  // Sampling as the client's Python literals (0.005, not the float 0.004999999888...).
  EXPECT_FALSE(body.contains("priority"));  // priority 0 is not sent
  EXPECT_EQ(Field(body, "temperature"), Json(0.0));
  EXPECT_EQ(Field(body, "top_p"), Json(0.01));
  EXPECT_TRUE(Field(body, "top_k").is_number_integer());
  EXPECT_EQ(Field(body, "top_k"), Json(1));
  EXPECT_EQ(Field(body, "presence_penalty"), Json(1.0));
  EXPECT_EQ(Field(body, "frequency_penalty"), Json(0.005));
  EXPECT_EQ(Field(body, "repetition_penalty"), Json(1.0));
  EXPECT_EQ(Field(body, "vllm_xargs"), Json({{"no_repeat_ngram_size", 100}, {"debug", false}}));
  EXPECT_EQ(Field(body, "max_completion_tokens"), Json(4096));
  EXPECT_EQ(Field(body, "max_tokens"), Json(4096));
  EXPECT_EQ(Field(body, "skip_special_tokens"), Json(false));
  EXPECT_NE(Field(body, "stream"), Json(true));

  // The client's key order, read off the text (the prompt and base64 hold no quoted key).
  const std::vector<std::string> order = {"model",
                                          "messages",
                                          "temperature",
                                          "top_p",
                                          "top_k",
                                          "presence_penalty",
                                          "frequency_penalty",
                                          "repetition_penalty",
                                          "vllm_xargs",
                                          "max_completion_tokens",
                                          "max_tokens",
                                          "skip_special_tokens"};
  size_t previous = 0;
  for (const std::string& key : order) {
    const size_t at = posted.body.find("\"" + key + "\"");
    ASSERT_NE(at, std::string::npos) << key;
    EXPECT_GE(at, previous) << key << " out of order in " << posted.body.substr(0, 120);
    previous = at;
  }
}

TEST_F(RemoteGeneratorTest, PriorityAndTokenLimitsAreSentOnlyWhenSet) {
  ASSERT_TRUE(StartStub(R"([{"do": "answer"}])")) << kStubDidNotStart;
  auto generator = Make(Options());
  ASSERT_NE(generator, nullptr);
  EXPECT_EQ(Generate(*generator, CropRequest("with priority", 3)).finish_reason,
            FinishReason::kStop);
  EXPECT_EQ(Generate(*generator, CropRequest("without")).finish_reason, FinishReason::kStop);
  std::vector<StubRequest> received = stub_.ChatReceived();
  ASSERT_EQ(received.size(), 2u);
  EXPECT_EQ(Field(received[0].json, "priority"), Json(3));
  EXPECT_FALSE(received[1].json.contains("priority"));
  for (const StubRequest& posted : received) {
    EXPECT_FALSE(posted.json.contains("max_tokens")) << posted.prompt;
    EXPECT_FALSE(posted.json.contains("max_completion_tokens")) << posted.prompt;
  }
}

TEST_F(RemoteGeneratorTest, TextOnlyRequestHasOneTextPart) {
  ASSERT_TRUE(StartStub(R"([{"do": "answer", "content": "merged:{prompt}"}])")) << kStubDidNotStart;
  auto generator = Make(Options());
  ASSERT_NE(generator, nullptr);
  engine::GenerationResult result = Generate(*generator, TextRequest("merge these"));
  EXPECT_EQ(result.finish_reason, FinishReason::kStop) << result.error;
  EXPECT_EQ(result.text, "merged:merge these");
  const StubRequest posted = OnlyChatRequest(stub_);
  const Json messages = Field(posted.json, "messages");
  ASSERT_TRUE(messages.is_array() && messages.size() == 2) << posted.body;
  EXPECT_EQ(Field(messages[1], "content"),
            Json::array({Json({{"type", "text"}, {"text", "merge these"}})}));
  EXPECT_EQ(posted.body.find("image_url"), std::string::npos);
}

TEST_F(RemoteGeneratorTest, NoAuthorizationHeaderWithoutAKey) {
  ASSERT_TRUE(StartStub(R"([{"do": "answer"}])")) << kStubDidNotStart;
  auto generator = Make(Options());
  ASSERT_NE(generator, nullptr);
  EXPECT_EQ(Generate(*generator, CropRequest("x")).finish_reason, FinishReason::kStop);
  EXPECT_EQ(OnlyChatRequest(stub_).headers.count("authorization"), 0u);
}

// "http://host:port/v1/" names the same server as "http://host:port".
TEST_F(RemoteGeneratorTest, UrlEndingInV1PostsToTheSameEndpoint) {
  ASSERT_TRUE(StartStub(R"([{"do": "answer"}])")) << kStubDidNotStart;
  RemoteGeneratorOptions options = Options();
  options.server.url = stub_.Url() + "/v1/";
  auto generator = Make(options);
  ASSERT_NE(generator, nullptr);
  EXPECT_EQ(Generate(*generator, CropRequest("x")).finish_reason, FinishReason::kStop);
  EXPECT_EQ(OnlyChatRequest(stub_).path, "/v1/chat/completions");
}

// Sequential requests reuse one keep-alive connection (the stub sees one client port).
TEST_F(RemoteGeneratorTest, SequentialRequestsShareOneKeepAliveConnection) {
  ASSERT_TRUE(StartStub(R"([{"do": "answer"}])")) << kStubDidNotStart;
  auto generator = Make(Options());
  ASSERT_NE(generator, nullptr);
  for (const char* prompt : {"a", "b", "c"}) {
    EXPECT_EQ(Generate(*generator, CropRequest(prompt)).text, prompt);
  }
  std::vector<StubRequest> received = stub_.ChatReceived();
  ASSERT_EQ(received.size(), 3u);
  EXPECT_GT(received[0].peer_port, 0);
  EXPECT_EQ(received[1].peer_port, received[0].peer_port);
  EXPECT_EQ(received[2].peer_port, received[0].peer_port);
}

TEST(RemoteGeneratorCreateTest, RefusesABadUrlOrConcurrency) {
  RemoteGeneratorOptions options;
  options.server.url = "ftp://127.0.0.1:1";
  options.server.model = "m";
  auto bad_url = RemoteGenerator::Create(options);
  ASSERT_FALSE(bad_url);
  EXPECT_EQ(bad_url.error().code, ErrorCode::kInvalidArgument);

  options.server.url = "http://127.0.0.1:1";
  options.server.concurrency = 0;
  auto no_concurrency = RemoteGenerator::Create(options);
  ASSERT_FALSE(no_concurrency);
  EXPECT_EQ(no_concurrency.error().code, ErrorCode::kInvalidArgument);
}

// What the body cannot express is refused at Submit, before anything is sent.
TEST(RemoteGeneratorCreateTest, SubmitRefusesRequestsTheBodyCannotExpress) {
  RemoteGeneratorOptions options;
  options.server.url = "http://127.0.0.1:1";  // never reached
  options.server.model = "m";
  auto generator = RemoteGenerator::Create(options);
  ASSERT_TRUE(generator) << generator.error().ToString();

  engine::Request ids;
  ids.prompt_ids = {1, 2, 3};
  auto refused_ids = (*generator)->Submit(std::move(ids));
  ASSERT_FALSE(refused_ids);
  EXPECT_EQ(refused_ids.error().code, ErrorCode::kInvalidArgument);

  engine::Request missing_image = CropRequest("x");
  missing_image.images.clear();  // an image part with no image
  auto refused_image = (*generator)->Submit(std::move(missing_image));
  ASSERT_FALSE(refused_image);
  EXPECT_EQ(refused_image.error().code, ErrorCode::kInvalidArgument);

  EXPECT_EQ((*generator)->Stats().attempts, 0);
}

}  // namespace
}  // namespace mineru::pipeline::testing
