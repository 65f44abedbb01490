// SPDX-License-Identifier: Apache-2.0
// /v1/chat/completions and /v1/models against a raw POSIX-socket client, with the request shapes
// of mineru-vl-utils 1.2.1's http_client (TV-45) on the tiny random checkpoint with the Qwen2
// tokenizer: text-only and several-image requests answered exactly as the engine answers the
// same messages submitted directly, the gpt-model-id shape, token limits clamped to the context
// (finish_reason "length", usage exact, never refused), priority order, no_repeat_ngram_size
// applied and vllm_xargs.debug ignored, and the one model with its MinerU profile.
#include <gtest/gtest.h>

#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "../support/http_client.h"
#include "../support/scratch.h"
#include "../support/wait.h"
#include "base/json.h"
#include "image/data_url.h"
#include "image/decode.h"
#include "pipeline/chat_answer.h"
#include "service/openai_api.h"
#include "text/text_assembler.h"
#include "tiny_chat.h"

namespace mineru::service {
namespace {

using testing_support::WaitUntil;

constexpr char kModelId[] = "tiny-mineru-pro";

using testing_support::Exchange;
using Response = testing_support::HttpReply;

Json ImagePart(const std::string& url) {
  return Json{{"type", "image_url"}, {"image_url", {{"url", url}}}};
}
Json TextPart(const std::string& text) { return Json{{"type", "text"}, {"text", text}}; }

// mineru-vl-utils 1.2.1's body around a user content array (greedy, MinerU's penalties).
Json ClientBody(std::string_view model, Json content) {
  return Json{{"model", model},
              {"messages",
               {{{"role", "system"}, {"content", "You are a helpful assistant."}},
                {{"role", "user"}, {"content", std::move(content)}}}},
              {"temperature", 0.0},
              {"top_p", 0.01},
              {"top_k", 1},
              {"presence_penalty", 1.0},
              {"frequency_penalty", 0.05},
              {"repetition_penalty", 1.0},
              {"vllm_xargs", {{"no_repeat_ngram_size", 100}, {"debug", false}}},
              {"skip_special_tokens", false}};
}

engine::SamplingParams ClientSampling() {
  engine::SamplingParams s;
  s.temperature = 0.0f;
  s.top_p = 0.01f;
  s.top_k = 1;
  s.presence_penalty = 1.0f;
  s.frequency_penalty = 0.05f;
  s.repetition_penalty = 1.0f;
  s.no_repeat_ngram_size = 100;
  return s;
}

// What the client checks of an answer (mineru-vl-utils get_response_content, TV-46): a JSON
// object with a non-empty choices array, finish_reason stop or length, message.content a
// string; usage adds up. Returns the body (null on failure).
Json ExpectClientAcceptable(const std::optional<Response>& r) {
  EXPECT_TRUE(r);
  if (!r) return Json();
  EXPECT_EQ(r->status, 200) << r->body;
  auto json = ParseJson(r->body, "completion");
  EXPECT_TRUE(json) << r->body;
  if (!json || !(*json)["choices"].is_array() || (*json)["choices"].empty()) {
    ADD_FAILURE() << r->body;
    return Json();
  }
  const Json& choice = (*json)["choices"][0];
  auto accepted = pipeline::ReadChatAnswer(r->body);
  EXPECT_TRUE(accepted) << accepted.error().ToString() << " " << r->body;
  EXPECT_TRUE(choice["message"]["content"].is_string()) << r->body;
  const Json& usage = (*json)["usage"];
  EXPECT_EQ(usage["total_tokens"].get<int64_t>(),
            usage["prompt_tokens"].get<int64_t>() + usage["completion_tokens"].get<int64_t>());
  return *json;
}

std::string Content(const Json& answer) {
  return answer["choices"][0]["message"].value("content", std::string("<missing>"));
}

image::RgbImage Pixels(const std::vector<uint8_t>& png) {
  auto decoded = image::DecodeImage(png);
  EXPECT_TRUE(decoded) << decoded.error().ToString();
  return decoded ? std::move(decoded->image) : image::RgbImage{};
}

// One answer of the engine to a request submitted directly, with its text as the API builds it
// (special tokens kept).
struct Direct {
  engine::GenerationResult result;
  std::string text;
};

Direct Generate(engine::Engine& engine, engine::Request request) {
  auto handle = engine.Submit(std::move(request));
  EXPECT_TRUE(handle) << handle.error().ToString();
  if (!handle) return {};
  Direct out{handle->Wait(), {}};
  text::TextAssembler text(*engine.tokenizer(), /*skip_special=*/false, {});
  text.Add(out.result.ids);  // the stop token is not part of the output
  text.Finish();
  out.text = text.text();
  return out;
}

class ChatClientTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const std::string dir = testing_support::ScratchRoot() + "/chat-client-model";
    auto loaded = testing_support::WriteAndLoadTinyModel(dir, 5);
    ASSERT_TRUE(loaded) << loaded.error().ToString();
    model_ = new std::shared_ptr<const model::Model>(std::move(*loaded));
    dir_ = new std::string(dir);
    auto engine = engine::Engine::Create(*model_, dir, testing_support::TinyEngineOptions());
    ASSERT_TRUE(engine) << engine.error().ToString();
    engine_ = std::move(*engine).release();
    OpenAiOptions api;
    api.model_id = kModelId;
    api.profile = pipeline::Profile::kPro;
    server_ = StartServer(*engine_, api).release();
    ASSERT_NE(server_, nullptr);
  }
  static void TearDownTestSuite() {
    if (server_ != nullptr) server_->Stop(std::chrono::seconds(2));
    delete server_;
    delete engine_;
    delete model_;
    delete dir_;
    server_ = nullptr;
    engine_ = nullptr;
    model_ = nullptr;
    dir_ = nullptr;
  }
  void SetUp() override { ASSERT_NE(server_, nullptr); }

  // A server for `engine` with `api` on a free port (null, and a failure, if it cannot start).
  static std::unique_ptr<HttpServer> StartServer(engine::Engine& engine, const OpenAiOptions& api) {
    auto server = std::make_unique<HttpServer>();
    AddOpenAiRoutes(*server, engine, api);
    ServerOptions options;
    options.port = 0;
    options.handler_threads = 4;
    auto started = server->Start(options);
    EXPECT_TRUE(started) << started.error().ToString();
    return started ? std::move(server) : nullptr;
  }
  static std::unique_ptr<engine::Engine> MakeEngine(engine::EngineOptions options) {
    auto engine = engine::Engine::Create(*model_, *dir_, options);
    EXPECT_TRUE(engine) << engine.error().ToString();
    return engine ? std::move(*engine) : nullptr;
  }
  static std::optional<Response> Chat(const HttpServer& server, const Json& body) {
    return Exchange(server.port(), "POST", "/v1/chat/completions", body.dump());
  }
  static std::optional<Response> Chat(const Json& body) { return Chat(*server_, body); }

  static engine::Request DirectRequest(std::vector<text::ChatPart> user_parts,
                                       std::vector<image::RgbImage> images,
                                       std::optional<int64_t> max_new_tokens) {
    engine::Request r;
    r.messages = {{"system", {text::ChatPart::Text("You are a helpful assistant.")}},
                  {"user", std::move(user_parts)}};
    for (image::RgbImage& rgb : images) {
      engine::ImageInput input;
      input.rgb = std::move(rgb);
      r.images.push_back(std::move(input));
    }
    r.sampling = ClientSampling();
    r.max_new_tokens = max_new_tokens;
    return r;
  }

  static inline engine::Engine* engine_ = nullptr;
  static inline HttpServer* server_ = nullptr;
  static inline std::shared_ptr<const model::Model>* model_ = nullptr;
  static inline std::string* dir_ = nullptr;
};

TEST_F(ChatClientTest, ModelsListsExactlyOneModelWithItsProfile) {
  auto r = Exchange(server_->port(), "GET", "/v1/models");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  auto json = ParseJson(r->body, "models");
  ASSERT_TRUE(json) << r->body;
  EXPECT_EQ((*json)["object"], "list");
  ASSERT_EQ((*json)["data"].size(), 1u);
  const Json& model = (*json)["data"][0];
  EXPECT_EQ(model["id"], kModelId);
  EXPECT_EQ(model["object"], "model");
  EXPECT_EQ(model["owned_by"], "mineru.cpp");
  EXPECT_EQ(model["root"], kModelId);
  EXPECT_TRUE(model["created"].is_number_integer());
  EXPECT_EQ(model["mineru_profile"], "pro");

  // The default profile is 2509.
  OpenAiOptions plain;
  plain.model_id = "plain";
  auto server = StartServer(*engine_, plain);
  ASSERT_NE(server, nullptr);
  auto other = Exchange(server->port(), "GET", "/v1/models");
  ASSERT_TRUE(other);
  EXPECT_EQ((*ParseJson(other->body, "models"))["data"][0]["mineru_profile"], "2509");
}

TEST_F(ChatClientTest, TV45TextOnlyMergeRequestIsAnsweredAsTheEngineAnswersIt) {
  const std::string prompt =
      "Please merge the next two tables.\n<table><tr><td>1</td></tr></table>";
  Json body = ClientBody(kModelId, Json::array({TextPart(prompt)}));
  body["max_tokens"] = 12;
  const Json answer = ExpectClientAcceptable(Chat(body));
  ASSERT_FALSE(answer.is_null());
  const Direct direct = Generate(*engine_, DirectRequest({text::ChatPart::Text(prompt)}, {}, 12));
  EXPECT_EQ(Content(answer), direct.text);
  EXPECT_EQ(answer["usage"]["prompt_tokens"], direct.result.usage.prompt_tokens);
  EXPECT_EQ(answer["usage"]["completion_tokens"], direct.result.usage.completion_tokens);
  // The prompt holds no image token at all.
  EXPECT_EQ(direct.result.usage.image_tokens, 0);
}

TEST_F(ChatClientTest, TV45ImagesBetweenTextPiecesAreRenderedInOrder) {
  const std::vector<uint8_t> wide = testing_support::PatternPng(112, 56, 37);
  const std::vector<uint8_t> tall = testing_support::PatternPng(56, 112, 11, 9);
  Json body = ClientBody(
      kModelId,
      Json::array({TextPart("A"), ImagePart(image::MakeDataUrl("image/png", wide)), TextPart("B"),
                   ImagePart(image::MakeDataUrl("image/png", tall)), TextPart("C")}));
  body["max_completion_tokens"] = 10;
  body["max_tokens"] = 10;
  const Json answer = ExpectClientAcceptable(Chat(body));
  ASSERT_FALSE(answer.is_null());
  using text::ChatPart;
  const Direct same = Generate(
      *engine_, DirectRequest({ChatPart::Text("A"), ChatPart::Image({}), ChatPart::Text("B"),
                               ChatPart::Image({}), ChatPart::Text("C")},
                              {Pixels(wide), Pixels(tall)}, 10));
  EXPECT_EQ(Content(answer), same.text);
  EXPECT_EQ(answer["usage"]["prompt_tokens"], same.result.usage.prompt_tokens);
  EXPECT_GT(same.result.usage.image_tokens, 0);

  // The images swapped: another prompt (the positions of the image tokens follow each image's
  // shape), answered as the engine answers that order.
  Json swapped = body;
  std::swap(swapped["messages"][1]["content"][1], swapped["messages"][1]["content"][3]);
  const Json swapped_answer = ExpectClientAcceptable(Chat(swapped));
  const Direct other = Generate(
      *engine_, DirectRequest({ChatPart::Text("A"), ChatPart::Image({}), ChatPart::Text("B"),
                               ChatPart::Image({}), ChatPart::Text("C")},
                              {Pixels(tall), Pixels(wide)}, 10));
  EXPECT_EQ(Content(swapped_answer), other.text);
}

TEST_F(ChatClientTest, TV45GptModelIdShapeIsAcceptedAndKeepsSpecialTokens) {
  OpenAiOptions api;
  api.model_id = "gpt-4o-mini";
  auto server = StartServer(*engine_, api);
  ASSERT_NE(server, nullptr);
  Json body = ClientBody("gpt-4o-mini",
                         Json::array({ImagePart(testing_support::PatternPngDataUrl(112, 84, 37)),
                                      TextPart("\nLayout Detection:")}));
  body["max_tokens"] = 10;
  Json explicit_keep = body;
  for (const char* key : {"top_k", "repetition_penalty", "skip_special_tokens"}) body.erase(key);
  const Json gpt = ExpectClientAcceptable(Chat(*server, body));
  const Json keep = ExpectClientAcceptable(Chat(*server, explicit_keep));
  ASSERT_FALSE(gpt.is_null());
  ASSERT_FALSE(keep.is_null());
  // Greedy either way (temperature 0), so dropping top_k changes nothing; no
  // skip_special_tokens means false.
  EXPECT_EQ(Content(gpt), Content(keep));
  EXPECT_EQ(gpt["usage"], keep["usage"]);
}

TEST_F(ChatClientTest, BothLimitsTheSmallerWins) {
  Json body = ClientBody(kModelId, Json::array({TextPart("count: one two three")}));
  body["vllm_xargs"]["no_repeat_ngram_size"] = 0;
  body["max_completion_tokens"] = 9;
  body["max_tokens"] = 3;
  const Json three = ExpectClientAcceptable(Chat(body));
  ASSERT_FALSE(three.is_null());
  const Direct direct = Generate(*engine_, [] {
    engine::Request r = DirectRequest({text::ChatPart::Text("count: one two three")}, {}, 3);
    r.sampling.no_repeat_ngram_size = 0;
    return r;
  }());
  EXPECT_EQ(Content(three), direct.text);
  EXPECT_EQ(three["usage"]["completion_tokens"], direct.result.usage.completion_tokens);
  EXPECT_LE(three["usage"]["completion_tokens"].get<int64_t>(), 3);
  if (direct.result.finish_reason == engine::FinishReason::kLength) {
    EXPECT_EQ(three["choices"][0]["finish_reason"], "length");
    EXPECT_EQ(three["usage"]["completion_tokens"], 3);
  }
  std::swap(body["max_completion_tokens"], body["max_tokens"]);
  EXPECT_EQ(Content(ExpectClientAcceptable(Chat(body))), Content(three));
}

// A limit past the context, or none, runs to the end of the context: finish_reason "length",
// completion_tokens = context - prompt (MinerU issue #4868: never a 400 for asking too much).
TEST_F(ChatClientTest, LimitPastTheContextIsClampedNeverRefused) {
  constexpr int64_t kContext = 40;
  engine::EngineOptions options = testing_support::TinyEngineOptions();
  options.max_context = kContext;
  auto engine = MakeEngine(options);
  ASSERT_NE(engine, nullptr);
  OpenAiOptions api;
  api.model_id = kModelId;
  auto server = StartServer(*engine, api);
  ASSERT_NE(server, nullptr);

  Json body = ClientBody(kModelId, Json::array({TextPart("x")}));
  body["vllm_xargs"]["no_repeat_ngram_size"] = 0;
  // The same answer for a limit far past the context, a limit of exactly the room left, both
  // keys with a huge value, and no limit at all.
  std::vector<Json> bodies;
  for (const std::optional<int64_t>& limit :
       {std::optional<int64_t>(100000), std::optional<int64_t>(std::nullopt)}) {
    Json b = body;
    if (limit) {
      b["max_tokens"] = *limit;
      b["max_completion_tokens"] = *limit;
    }
    bodies.push_back(b);
  }
  Json only_tokens = body;
  only_tokens["max_tokens"] = int64_t{1} << 40;
  bodies.push_back(only_tokens);
  std::optional<Json> first;
  for (const Json& b : bodies) {
    const Json answer = ExpectClientAcceptable(Chat(*server, b));
    ASSERT_FALSE(answer.is_null()) << b.dump();
    const Json& usage = answer["usage"];
    EXPECT_EQ(answer["choices"][0]["finish_reason"], "length") << b.dump();
    EXPECT_EQ(usage["total_tokens"], kContext) << b.dump();
    EXPECT_EQ(usage["completion_tokens"].get<int64_t>(),
              kContext - usage["prompt_tokens"].get<int64_t>());
    if (!first) {
      first = answer;
      // The room left, asked exactly: the same answer.
      Json exact = body;
      exact["max_tokens"] = usage["completion_tokens"];
      EXPECT_EQ(Content(ExpectClientAcceptable(Chat(*server, exact))), Content(answer));
    } else {
      EXPECT_EQ(Content(answer), Content(*first)) << b.dump();
    }
  }
  // Streamed: the same text and a "length" finish.
  Json streamed = bodies[0];
  streamed["stream"] = true;
  auto r = Chat(*server, streamed);
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  std::string content, finish;
  for (const std::string& event : testing_support::SseData(r->body)) {
    auto chunk = ParseJson(event, "chunk");
    if (!chunk || (*chunk)["choices"].empty()) continue;
    const Json& choice = (*chunk)["choices"][0];
    if (choice["delta"].contains("content")) content += choice["delta"]["content"];
    if (!choice["finish_reason"].is_null()) finish = choice["finish_reason"];
  }
  EXPECT_EQ(finish, "length");
  EXPECT_EQ(content, Content(*first));

  // A prompt that fills the context is still refused: nothing could be generated.
  Json too_long = body;
  too_long["messages"][1]["content"][0]["text"] = std::string(400, 'x');
  auto refused = Chat(*server, too_long);
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 400) << refused->body;
  EXPECT_NE(refused->body.find("the context holds 40"), std::string::npos) << refused->body;
}

// Lower priority values run first: the engine (one sequence at a time) is held until both
// requests wait, then finishes them in priority order, whatever order they arrived in.
TEST_F(ChatClientTest, LowerPriorityValueRunsFirst) {
  std::mutex mutex;
  std::condition_variable changed;
  bool held = true;
  std::vector<int64_t> finished_prompts;  // prompt_tokens of each request, in finishing order
  engine::EngineOptions options = testing_support::TinyEngineOptions();
  options.max_running = 1;
  options.before_iteration = [&] {
    std::unique_lock lock(mutex);
    changed.wait(lock, [&] { return !held; });
  };
  options.on_request_finished = [&](const engine::GenerationResult& result) {
    std::lock_guard lock(mutex);
    finished_prompts.push_back(result.usage.prompt_tokens);
  };
  auto engine = MakeEngine(options);
  ASSERT_NE(engine, nullptr);
  OpenAiOptions api;
  api.model_id = kModelId;
  auto server = StartServer(*engine, api);
  ASSERT_NE(server, nullptr);

  // Prompts of different lengths tell the two apart.
  Json late = ClientBody(kModelId, Json::array({TextPart("first to arrive, last to run")}));
  late["priority"] = 9;
  late["max_tokens"] = 6;
  Json urgent = ClientBody(kModelId, Json::array({TextPart("urgent")}));
  urgent["priority"] = 1;
  urgent["max_tokens"] = 6;
  std::optional<Response> late_reply, urgent_reply;
  std::thread late_client([&] { late_reply = Chat(*server, late); });
  WaitUntil([&] { return engine->Stats().submitted >= 1; });
  std::thread urgent_client([&] { urgent_reply = Chat(*server, urgent); });
  WaitUntil([&] { return engine->Stats().submitted >= 2; });
  EXPECT_EQ(engine->Stats().submitted, 2);
  {
    std::lock_guard lock(mutex);
    held = false;
  }
  changed.notify_all();
  late_client.join();
  urgent_client.join();
  const Json late_answer = ExpectClientAcceptable(late_reply);
  const Json urgent_answer = ExpectClientAcceptable(urgent_reply);
  ASSERT_FALSE(late_answer.is_null());
  ASSERT_FALSE(urgent_answer.is_null());
  const int64_t late_prompt = late_answer["usage"]["prompt_tokens"];
  const int64_t urgent_prompt = urgent_answer["usage"]["prompt_tokens"];
  ASSERT_NE(late_prompt, urgent_prompt);
  std::lock_guard lock(mutex);
  EXPECT_EQ(finished_prompts, (std::vector<int64_t>{urgent_prompt, late_prompt}));
}

TEST_F(ChatClientTest, NoRepeatNgramSizeIsAppliedAndDebugIgnored) {
  constexpr int kTokens = 48;
  constexpr int kNgram = 2;
  Json body = ClientBody(kModelId, Json::array({TextPart("repeat after me: la la la la")}));
  body["max_tokens"] = kTokens;
  body["vllm_xargs"] = {{"no_repeat_ngram_size", kNgram}, {"debug", true}};
  const Json banned = ExpectClientAcceptable(Chat(body));
  ASSERT_FALSE(banned.is_null());
  body["vllm_xargs"]["debug"] = false;
  EXPECT_EQ(Content(ExpectClientAcceptable(Chat(body))), Content(banned));

  engine::Request request =
      DirectRequest({text::ChatPart::Text("repeat after me: la la la la")}, {}, kTokens);
  request.sampling.no_repeat_ngram_size = kNgram;
  const Direct direct = Generate(*engine_, std::move(request));
  EXPECT_EQ(Content(banned), direct.text);
  // No bigram occurs twice among the output tokens.
  const std::vector<int32_t>& ids = direct.result.ids;
  std::set<std::pair<int32_t, int32_t>> seen;
  for (size_t i = 0; i + 1 < ids.size(); ++i) {
    EXPECT_TRUE(seen.insert({ids[i], ids[i + 1]}).second) << "bigram repeated at " << i;
  }
}

TEST_F(ChatClientTest, BadRequestsAreClientErrors) {
  // A text part that spells out the image placeholder would desynchronise the image tokens.
  auto placeholder = Chat(ClientBody(kModelId, Json::array({TextPart("see <|image_pad|> here")})));
  ASSERT_TRUE(placeholder);
  EXPECT_EQ(placeholder->status, 400) << placeholder->body;
  Json zero = ClientBody(kModelId, Json::array({TextPart("x")}));
  zero["max_tokens"] = 0;
  auto refused = Chat(zero);
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 400) << refused->body;
  EXPECT_NE(refused->body.find("max_tokens"), std::string::npos) << refused->body;
}

}  // namespace
}  // namespace mineru::service
