// SPDX-License-Identifier: Apache-2.0
// `mineru-cpp serve`'s trust flags end to end on a tiny random checkpoint: the API key from
// --api-key-file and from $MINERU_API_KEY (Bearer on every route but the probes and the web
// UI's files), the cross-site rule with --allowed-origins (on by default in serve: a foreign
// Host or Origin is 403), and the refusal of bad values of every new serve flag.
#include <cstdlib>
#include <string>

#include "../support/http_client.h"
#include "cli_test_util.h"
#include "serve_process.h"

namespace mineru::apps {
namespace {

using testing::CliResult;
using testing::Describe;
using testing::RunCli;
using testing::ServeProcess;
using testing::UsageError;
using testing_support::Client;
using testing_support::Exchange;

std::string TinyModel(const std::string& scratch) {
  const std::string dir = scratch + "/model";
  const CliResult made = RunCli(
      {"make-model", "--config", "tiny", "-o", dir, "--tokenizer-source", MINERU_QWEN_TOKENIZER});
  EXPECT_TRUE(testing::Succeeded(made)) << Describe(made);
  return dir;
}

std::optional<testing_support::HttpReply> Get(int port, const std::string& path,
                                              const std::string& headers = "") {
  return Exchange(port, "GET", path, "", "", headers);
}

TEST(ServeTrustCliTest, ApiKeyFileAndCrossSiteRules) {
  const std::string scratch = testing::TestDir();
  const std::string model = TinyModel(scratch);
  const std::string key_file = scratch + "/key";
  testing::WriteFile(key_file, "sk-from-file_0123\n");
  ServeProcess server({"--model", model, "--work-dir", scratch + "/work", "--api-key-file",
                       key_file, "--allowed-origins", "https://ui.example,http://other:3000"});
  ASSERT_FALSE(server.url().empty()) << server.log();
  const int port = server.port();
  const std::string bearer = "Authorization: Bearer sk-from-file_0123\r\n";

  for (const char* path : {"/health/live", "/health/ready", "/"}) {
    auto r = Get(port, path);
    ASSERT_TRUE(r) << path;
    EXPECT_EQ(r->status, 200) << path << ": no key needed";
  }
  for (const char* path : {"/v1/models", "/metrics", "/health", "/v1/tasks/x"}) {
    auto r = Get(port, path);
    ASSERT_TRUE(r) << path;
    EXPECT_EQ(r->status, 401) << path;
    EXPECT_NE(r->body.find("authentication_error"), std::string::npos) << r->body;
  }
  auto models = Get(port, "/v1/models", bearer);
  ASSERT_TRUE(models);
  EXPECT_EQ(models->status, 200) << models->body;
  auto metrics = Get(port, "/metrics", bearer);
  ASSERT_TRUE(metrics);
  EXPECT_EQ(metrics->status, 200);

  // A name that is not this server's (DNS rebinding) and a foreign origin: 403 even with the
  // key; a listed origin gets its CORS header.
  Client rebound(port);
  ASSERT_TRUE(rebound.Send("GET /v1/models HTTP/1.1\r\nHost: attacker.example:" +
                           std::to_string(port) + "\r\n" + bearer + "\r\n"));
  auto refused = rebound.ReadResponse();
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 403) << refused->body;
  auto foreign = Get(port, "/v1/models", bearer + "Origin: https://evil.example\r\n");
  ASSERT_TRUE(foreign);
  EXPECT_EQ(foreign->status, 403);
  auto listed = Get(port, "/v1/models", bearer + "Origin: https://ui.example\r\n");
  ASSERT_TRUE(listed);
  EXPECT_EQ(listed->status, 200);
  EXPECT_EQ(listed->Header("access-control-allow-origin"), "https://ui.example");
  EXPECT_EQ(server.Stop(), 0) << server.log();
}

TEST(ServeTrustCliTest, KeyFromTheEnvironment) {
  const std::string scratch = testing::TestDir();
  const std::string model = TinyModel(scratch);
  ServeProcess server({"--model", model, "--work-dir", scratch + "/work"},
                      {"MINERU_API_KEY=sk-env-key"});
  ASSERT_FALSE(server.url().empty()) << server.log();
  auto without = Get(server.port(), "/v1/models");
  ASSERT_TRUE(without);
  EXPECT_EQ(without->status, 401);
  auto with = Get(server.port(), "/v1/models", "Authorization: Bearer sk-env-key\r\n");
  ASSERT_TRUE(with);
  EXPECT_EQ(with->status, 200);
  EXPECT_EQ(server.log().find("sk-env-key"), std::string::npos) << "the key is never printed";
  EXPECT_EQ(server.Stop(), 0) << server.log();
}

TEST(ServeTrustCliTest, BadTrustAndBudgetFlagsAreRefused) {
  const std::string dir = testing::TestDir();
  const std::string model = dir + "/no-such-model";
  const auto serve = [&](std::vector<std::string> flags) {
    flags.insert(flags.begin(), {"serve", "--model", model});
    return RunCli(flags);
  };
  EXPECT_TRUE(UsageError(serve({"--api-key", ""})));
  EXPECT_TRUE(UsageError(serve({"--api-key", "two words"})));
  testing::WriteFile(dir + "/key", "sk-1\n");
  testing::WriteFile(dir + "/empty", "\n");
  EXPECT_TRUE(UsageError(serve({"--api-key", "sk-1", "--api-key-file", dir + "/key"})));
  EXPECT_TRUE(UsageError(serve({"--api-key-file", dir + "/missing"})));
  EXPECT_TRUE(UsageError(serve({"--api-key-file", dir + "/empty"})));
  EXPECT_TRUE(UsageError(serve({"--allowed-origins", "ftp://x"})));
  EXPECT_TRUE(UsageError(serve({"--allowed-origins", "http://x/path"})));
  EXPECT_TRUE(UsageError(serve({"--max-body-bytes-in-flight", "0"})));
  EXPECT_TRUE(UsageError(serve({"--max-connections-per-client", "0"})));
  EXPECT_TRUE(UsageError(serve({"--max-chat-in-flight", "0"})));
  // A key in the environment that is no valid key stops the start (it never runs keyless).
  ::setenv("MINERU_API_KEY", "bad key", 1);
  const CliResult env = serve({});
  ::unsetenv("MINERU_API_KEY");
  EXPECT_TRUE(testing::ExitedWith(env, 2)) << Describe(env);
  EXPECT_NE(env.err.find("MINERU_API_KEY"), std::string::npos) << Describe(env);
}

}  // namespace
}  // namespace mineru::apps
