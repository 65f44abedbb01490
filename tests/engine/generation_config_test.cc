// SPDX-License-Identifier: Apache-2.0
// The engine's default stop set: config.json's eos_token_id, then generation_config.json's
// (an integer or a list), then pad_token_id from config.json and generation_config.json, without
// repeats; ids outside the vocabulary are errors naming the field.
#include "engine/generation_config.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "../support/scratch.h"
#include "base/json.h"
#include "devtools/random_checkpoint.h"

namespace mineru::engine {
namespace {

using testing_support::TestDir;
using testing_support::WriteFile;

model::ModelConfig Config(const Json& json) {
  auto config = model::ParseModelConfig(json, "config.json");
  EXPECT_TRUE(config) << config.error().ToString();
  return config ? *config : model::ModelConfig{};
}

// A folder with this generation_config.json (none for a null json).
std::string DirWith(const Json& generation) {
  const std::string dir = TestDir();
  if (!generation.is_null()) WriteFile(dir + "/generation_config.json", generation.dump());
  return dir;
}

std::vector<int32_t> Stops(const Json& config, const Json& generation) {
  auto stops = ReadStopIds(DirWith(generation), Config(config));
  EXPECT_TRUE(stops) << stops.error().ToString();
  return stops ? *stops : std::vector<int32_t>{-1};
}

// What make-model and the golden model write for 2509: config eos 151645, generation_config
// eos [151645, 151643] and pad 151643.
TEST(StopIdsTest, MinerU2509TinyKeepsItsSet) {
  const Json generation = {
      {"bos_token_id", 151643}, {"eos_token_id", {151645, 151643}}, {"pad_token_id", 151643}};
  EXPECT_EQ(Stops(devtools::TinyModelConfig(), generation), (std::vector<int32_t>{151645, 151643}));
  EXPECT_EQ(Stops(devtools::RealModelConfig(), generation), (std::vector<int32_t>{151645, 151643}));
}

TEST(StopIdsTest, ProLayout) {
  const Json generation = {{"eos_token_id", {151645, 151643}},
                           {"pad_token_id", 151643},
                           {"temperature", 0.01},
                           {"top_k", 1},
                           {"top_p", 0.001}};
  EXPECT_EQ(Stops(devtools::ProTinyModelConfig(), generation),
            (std::vector<int32_t>{151645, 151643}));
}

TEST(StopIdsTest, UnionOfEverySource) {
  Json config = devtools::TinyModelConfig();  // eos 151645
  // No generation_config.json: config's eos alone.
  EXPECT_EQ(Stops(config, nullptr), (std::vector<int32_t>{151645}));
  // generation_config adds to config's eos, it does not replace it.
  EXPECT_EQ(Stops(config, {{"eos_token_id", 151643}}), (std::vector<int32_t>{151645, 151643}));
  EXPECT_EQ(Stops(config, {{"eos_token_id", {7, 151645, 7}}}), (std::vector<int32_t>{151645, 7}));
  // pad_token_id from config.json (root or text_config) and from generation_config.json.
  config["pad_token_id"] = 151643;
  EXPECT_EQ(Stops(config, nullptr), (std::vector<int32_t>{151645, 151643}));
  EXPECT_EQ(Stops(config, {{"pad_token_id", 11}}), (std::vector<int32_t>{151645, 151643, 11}));
  Json nested = devtools::TinyModelConfig();
  nested["text_config"] = {{"pad_token_id", 12}, {"eos_token_id", {13, 14}}};
  EXPECT_EQ(Stops(nested, {{"eos_token_id", 15}}), (std::vector<int32_t>{13, 14, 15, 12}));
  // Null and empty lists add nothing.
  EXPECT_EQ(
      Stops(devtools::TinyModelConfig(), {{"eos_token_id", nullptr}, {"pad_token_id", nullptr}}),
      (std::vector<int32_t>{151645}));
  EXPECT_EQ(Stops(devtools::TinyModelConfig(), {{"eos_token_id", Json::array()}}),
            (std::vector<int32_t>{151645}));
}

TEST(StopIdsTest, Errors) {
  const model::ModelConfig config = Config(devtools::TinyModelConfig());
  auto fails = [&](const std::string& text, const std::vector<std::string>& parts) {
    const std::string dir = TestDir();
    WriteFile(dir + "/generation_config.json", text);
    auto stops = ReadStopIds(dir, config);
    ASSERT_FALSE(stops) << text;
    for (const std::string& part : parts) {
      EXPECT_NE(stops.error().message.find(part), std::string::npos)
          << part << " in " << stops.error().message;
    }
  };
  fails("{\"eos_token_id\": 151936}", {"generation_config.json eos_token_id", "151936"});
  fails("{\"eos_token_id\": [-1]}", {"eos_token_id", "-1"});
  fails("{\"pad_token_id\": 999999999}", {"generation_config.json pad_token_id"});
  fails("{\"eos_token_id\": \"151645\"}", {"'eos_token_id'"});
  fails("{\"pad_token_id\": [1]}", {"'pad_token_id'"});
  fails("[151645]", {"generation_config.json", "not a JSON object"});
  fails("{\"eos_token_id\": ", {"generation_config.json"});
  Json bad_pad = devtools::TinyModelConfig();
  bad_pad["pad_token_id"] = 200000;
  auto stops = ReadStopIds(TestDir(), Config(bad_pad));
  ASSERT_FALSE(stops);
  EXPECT_NE(stops.error().message.find("config.json pad_token_id 200000"), std::string::npos)
      << stops.error().message;
}

}  // namespace
}  // namespace mineru::engine
