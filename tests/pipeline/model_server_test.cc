// SPDX-License-Identifier: Apache-2.0
// pipeline/model_server.h: the base URL rule (one trailing "/", then one trailing "/v1", cut;
// a path prefix kept; what is not an http(s) base refused), and the served models read from a
// scripted stand-in server's GET /v1/models (model_server_stub.h): the list with and without
// `mineru_profile`, the API key sent, the first id by default, a named one, a missing name, the
// profile from the server's word, from a Pro-looking id, or forced; and the errors of a wrong
// shape, an empty list and an unreachable server.
#include "pipeline/model_server.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "remote_generator_fixture.h"

namespace mineru::pipeline::testing {
namespace {

TEST(NormalizeModelServerUrlTest, CutsSlashesThenOneV1) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"http://h:1", "http://h:1"},
      {"http://h:1/", "http://h:1"},
      {"http://h:1/v1", "http://h:1"},
      {"http://h:1/v1/", "http://h:1"},
      {"https://h/prefix/", "https://h/prefix"},
      {"https://h/prefix/v1", "https://h/prefix"},
      {"http://127.0.0.1:30000", "http://127.0.0.1:30000"},
      // Found by fuzz_model_server_answer: several slashes left one behind, so the base was not
      // its own normal form.
      {"https://l/mi:l///", "https://l/mi:l"},
      {"http://h:1/v1//", "http://h:1"},
      {"http://h:1//v1", "http://h:1"},
  };
  for (const auto& [url, base] : cases) {
    auto normalized = NormalizeModelServerUrl(url);
    ASSERT_TRUE(normalized) << url << ": " << normalized.error().ToString();
    EXPECT_EQ(*normalized, base) << url;
  }
}

TEST(NormalizeModelServerUrlTest, RefusesWhatIsNotAnHttpBase) {
  for (const char* url :
       {"ftp://h", "http://", "h:1", "http://h/?q=1", "http://h/#part", "", "https://"}) {
    auto normalized = NormalizeModelServerUrl(url);
    EXPECT_FALSE(normalized) << url << " -> " << (normalized ? *normalized : "");
    if (!normalized) {
      EXPECT_EQ(normalized.error().code, ErrorCode::kInvalidArgument) << url;
      EXPECT_FALSE(normalized.error().message.empty()) << url;
    }
  }
}

constexpr char kServedModels[] = R"([
    {"id": "first-model", "object": "model"},
    {"id": "MinerU2.5-Pro-2605-1.2B", "object": "model"},
    {"id": "served-pro", "object": "model", "mineru_profile": "pro"},
    {"id": "served-2509", "object": "model", "mineru_profile": "2509"}])";

class ServedModelsTest : public RemoteGeneratorTest {
 protected:
  ModelServerOptions Server() const { return Options().server; }
};

TEST_F(ServedModelsTest, ListsTheModelsWithTheirProfilesAndTheKey) {
  ASSERT_TRUE(StartStub("[]", kServedModels)) << kStubDidNotStart;
  ModelServerOptions server = Server();
  server.api_key = "list-key";
  auto models = ListServedModels(server);
  ASSERT_TRUE(models) << models.error().ToString();
  ASSERT_EQ(models->size(), 4u);
  EXPECT_EQ((*models)[0].id, "first-model");
  EXPECT_EQ((*models)[0].profile, std::nullopt);
  EXPECT_EQ((*models)[1].id, "MinerU2.5-Pro-2605-1.2B");
  EXPECT_EQ((*models)[1].profile, std::nullopt);  // the id is no word of the server's
  EXPECT_EQ((*models)[2].profile, Profile::kPro);
  EXPECT_EQ((*models)[3].profile, Profile::k2509);

  std::vector<StubRequest> received = stub_.Received();
  ASSERT_EQ(received.size(), 1u);
  EXPECT_EQ(received[0].method, "GET");
  EXPECT_EQ(received[0].path, "/v1/models");
  ASSERT_EQ(received[0].headers.count("authorization"), 1u);
  EXPECT_EQ(received[0].headers.at("authorization"), "Bearer list-key");
}

TEST_F(ServedModelsTest, UrlEndingInV1ListsFromTheSameEndpoint) {
  ASSERT_TRUE(StartStub("[]", kServedModels)) << kStubDidNotStart;
  ModelServerOptions server = Server();
  server.url = stub_.Url() + "/v1";
  auto models = ListServedModels(server);
  ASSERT_TRUE(models) << models.error().ToString();
  EXPECT_EQ(models->size(), 4u);
}

TEST_F(ServedModelsTest, ChoosesTheFirstANamedOneOrSaysWhatIsServed) {
  ASSERT_TRUE(StartStub("[]", kServedModels)) << kStubDidNotStart;
  auto models = ListServedModels(Server());
  ASSERT_TRUE(models) << models.error().ToString();

  auto first = ChooseServedModel(*models, "");
  ASSERT_TRUE(first) << first.error().ToString();
  EXPECT_EQ(first->id, "first-model");

  auto named = ChooseServedModel(*models, "served-pro");
  ASSERT_TRUE(named) << named.error().ToString();
  EXPECT_EQ(named->id, "served-pro");
  EXPECT_EQ(named->profile, Profile::kPro);

  auto missing = ChooseServedModel(*models, "not-served");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, ErrorCode::kNotFound);
  for (const char* id : {"first-model", "MinerU2.5-Pro-2605-1.2B", "served-pro", "served-2509"}) {
    EXPECT_NE(missing.error().message.find(id), std::string::npos) << missing.error().message;
  }
}

TEST_F(ServedModelsTest, ProfileFromTheServerTheIdOrForced) {
  ASSERT_TRUE(StartStub("[]", kServedModels)) << kStubDidNotStart;
  auto models = ListServedModels(Server());
  ASSERT_TRUE(models) << models.error().ToString();
  ASSERT_EQ(models->size(), 4u);
  const ServedModel& plain = (*models)[0];
  const ServedModel& pro_named = (*models)[1];
  const ServedModel& pro_said = (*models)[2];
  const ServedModel& said_2509 = (*models)[3];

  EXPECT_EQ(ServedModelProfile(plain, std::nullopt).profile, Profile::k2509);
  EXPECT_EQ(ServedModelProfile(pro_named, std::nullopt).profile, Profile::kPro);
  EXPECT_EQ(ServedModelProfile(pro_said, std::nullopt).profile, Profile::kPro);
  EXPECT_EQ(ServedModelProfile(said_2509, std::nullopt).profile, Profile::k2509);
  EXPECT_FALSE(ServedModelProfile(pro_said, std::nullopt).reason.empty());
  // A forced profile wins over the server's word and over the id.
  EXPECT_EQ(ServedModelProfile(pro_said, Profile::k2509).profile, Profile::k2509);
  EXPECT_EQ(ServedModelProfile(pro_named, Profile::k2509).profile, Profile::k2509);
  EXPECT_EQ(ServedModelProfile(plain, Profile::kPro).profile, Profile::kPro);
}

// The server's word wins over the id: a Pro-looking id that the server says is 2509.
TEST(ServedModelProfileTest, ServersWordWinsOverTheId) {
  ServedModel model{"MinerU2.5-Pro-2605-1.2B", Profile::k2509};
  EXPECT_EQ(ServedModelProfile(model, std::nullopt).profile, Profile::k2509);
}

TEST_F(ServedModelsTest, NotTheOpenAiListShapeIsCorrupt) {
  for (const char* models :
       {R"({"models": ["a"]})", R"({"data": [{"name": "a"}]})", R"({"data": "a"})", R"([1, 2])"}) {
    SCOPED_TRACE(models);
    ASSERT_TRUE(StartStub("[]", models)) << kStubDidNotStart;
    auto listed = ListServedModels(Server());
    ASSERT_FALSE(listed);
    EXPECT_EQ(listed.error().code, ErrorCode::kCorrupt) << listed.error().ToString();
    stub_.Stop();
  }
}

TEST_F(ServedModelsTest, AnEmptyListIsNotFound) {
  ASSERT_TRUE(StartStub("[]", "[]")) << kStubDidNotStart;
  auto listed = ListServedModels(Server());
  ASSERT_FALSE(listed);
  EXPECT_EQ(listed.error().code, ErrorCode::kNotFound) << listed.error().ToString();
}

TEST_F(ServedModelsTest, AnUnreachableServerIsUnavailable) {
  ASSERT_TRUE(StartStub("[]", kServedModels)) << kStubDidNotStart;
  ModelServerOptions server = Server();
  stub_.Stop();  // the port refuses from now on
  server.retry.max_retries = 1;
  server.deadline = 5s;
  auto listed = ListServedModels(server);
  ASSERT_FALSE(listed);
  EXPECT_EQ(listed.error().code, ErrorCode::kUnavailable) << listed.error().ToString();
}

}  // namespace
}  // namespace mineru::pipeline::testing
