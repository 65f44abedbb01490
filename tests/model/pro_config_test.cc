// SPDX-License-Identifier: Apache-2.0
// The loader rules for MinerU2.5-Pro's checkpoint layout, beside MinerU2.5-2509's: each text
// hyper-parameter from text_config, else the root, else the Qwen2VLTextConfig default; the
// M-RoPE parameters under rope_scaling or rope_parameters; tied embeddings from either flag or a
// missing lm_head.weight; "dtype" as well as "torch_dtype"; whether text_config is nested (the
// profile rule reads it). The Pro configs make-model writes are checked here too.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "base/json.h"
#include "checkpoint_test_util.h"
#include "devtools/random_checkpoint.h"
#include "model/checkpoint.h"
#include "model/config.h"
#include "model/model.h"

namespace mineru::model {
namespace {

using devtools::ProModelConfig;
using devtools::ProTinyModelConfig;
using devtools::RealModelConfig;
using devtools::TinyModelConfig;
using devtools::ToProLayout;
using testing::FailsWith;
using testing::Join;
using testing::LinkedCopy;
using testing::Replace;
using testing::SharedRandom;

constexpr std::string_view kWhere = "pro/config.json";

Result<ModelConfig> Parse(const Json& json) { return ParseModelConfig(json, kWhere); }

ModelConfig ParseOk(const Json& json) {
  auto config = Parse(json);
  EXPECT_TRUE(config) << config.error().ToString();
  return config ? *config : ModelConfig{};
}

// The tiny 2509 config with `key` moved from the root into text_config (nothing else nested).
Json OnlyInTextConfig(const std::string& key) {
  Json json = TinyModelConfig();
  json["text_config"] = {{key, json[key]}};
  json.erase(key);
  return json;
}

// ---------------------------------------------------------------------------------------------
// The configs make-model writes.

TEST(ProConfigTest, ProLayoutShape) {
  for (const Json& json : {ProModelConfig(), ProTinyModelConfig()}) {
    // The layout MinerU2.5-Pro-2605 ships: root text fields kept, text_config nested, the tie
    // flag only there, "dtype" only.
    ASSERT_TRUE(json.contains("text_config"));
    EXPECT_FALSE(json.contains("tie_word_embeddings"));
    EXPECT_FALSE(json.contains("torch_dtype"));
    EXPECT_EQ(json.value("dtype", ""), "bfloat16");
    const Json& text = json["text_config"];
    EXPECT_EQ(text.value("tie_word_embeddings", false), true);
    EXPECT_TRUE(text.contains("rope_scaling"));
    for (const char* key :
         {"hidden_size", "num_hidden_layers", "num_attention_heads", "num_key_value_heads",
          "intermediate_size", "vocab_size", "rms_norm_eps", "rope_theta",
          "max_position_embeddings", "eos_token_id", "vision_start_token_id", "vision_end_token_id",
          "vision_token_id", "image_token_id", "video_token_id"}) {
      EXPECT_TRUE(json.contains(key)) << key;
    }
    const ModelConfig config = ParseOk(json);
    EXPECT_TRUE(config.nested_text_config);
    EXPECT_TRUE(config.tie_word_embeddings);
    EXPECT_EQ(config.torch_dtype, "bfloat16");
  }
  // Same shapes as the 2509 configs.
  const ModelConfig pro = ParseOk(ProModelConfig()), real = ParseOk(RealModelConfig());
  EXPECT_EQ(pro.text.hidden_size, real.text.hidden_size);
  EXPECT_EQ(pro.text.num_layers, real.text.num_layers);
  EXPECT_EQ(pro.text.mrope_section, real.text.mrope_section);
  EXPECT_EQ(pro.vision.depth, real.vision.depth);
  EXPECT_FALSE(real.nested_text_config);
  const ModelConfig tiny = ParseOk(ProTinyModelConfig());
  EXPECT_EQ(tiny.text.hidden_size, 64);
  EXPECT_EQ(tiny.text.mrope_section, (std::vector<int>{2, 3, 3}));
  // ToProLayout is what ProModelConfig applies.
  EXPECT_EQ(ToProLayout(RealModelConfig()), ProModelConfig());
}

// ---------------------------------------------------------------------------------------------
// Tied embeddings.

TEST(ProConfigTest, TiedFromTextConfigAlone) {
  Json json = ProTinyModelConfig();
  EXPECT_TRUE(ParseOk(json).tie_word_embeddings);
  // A reader of the root alone would say false here.
  json["text_config"].erase("tie_word_embeddings");
  EXPECT_FALSE(ParseOk(json).tie_word_embeddings);
  json["text_config"]["tie_word_embeddings"] = nullptr;
  EXPECT_FALSE(ParseOk(json).tie_word_embeddings);
  json["tie_word_embeddings"] = true;
  EXPECT_TRUE(ParseOk(json).tie_word_embeddings);
}

// A Pro-layout config.json with no tie flag anywhere and weights without lm_head.weight: tied.
TEST(ProConfigTest, NoFlagAndNoLmHeadIsTied) {
  const std::string source = SharedRandom("pro-tiny", ProTinyModelConfig(), {.seed = 2});
  const std::string dir = LinkedCopy(source, "pro-untagged");
  Json json = ProTinyModelConfig();
  json["text_config"].erase("tie_word_embeddings");
  ASSERT_FALSE(json.contains("tie_word_embeddings"));
  Replace(Join(dir, "config.json"), json.dump(2));
  auto model = Model::Load(dir);
  ASSERT_TRUE(model) << model.error().ToString();
  const Checkpoint& checkpoint = (*model)->checkpoint();
  EXPECT_FALSE(checkpoint.config().tie_word_embeddings);
  EXPECT_FALSE(checkpoint.Has("lm_head.weight"));
  EXPECT_TRUE(checkpoint.tied_embeddings());
  EXPECT_TRUE(checkpoint.config().nested_text_config);
  EXPECT_EQ((*model)->weights().decoder.lm_head.data,
            (*model)->weights().decoder.embed_tokens.data);
}

TEST(ProConfigTest, NestedLmHeadNameIsTheLmHead) {
  EXPECT_EQ(CanonicalTensorName("model.lm_head.weight"), "lm_head.weight");
  EXPECT_EQ(CanonicalTensorName("model.lm_head.bias"), "model.lm_head.bias");
}

// ---------------------------------------------------------------------------------------------
// Each text field: text_config, else the root, else the default.

TEST(ProConfigTest, EveryTextFieldFallsBackFromTextConfigToRoot) {
  struct Case {
    std::string key;
    Json value;
    std::function<bool(const ModelConfig&)> read;
  };
  const std::vector<Case> cases = {
      {"hidden_size", 128, [](const ModelConfig& c) { return c.text.hidden_size == 128; }},
      {"num_hidden_layers", 3, [](const ModelConfig& c) { return c.text.num_layers == 3; }},
      {"num_attention_heads", 8, [](const ModelConfig& c) { return c.text.num_heads == 8; }},
      {"num_key_value_heads", 4, [](const ModelConfig& c) { return c.text.num_kv_heads == 4; }},
      {"intermediate_size", 96,
       [](const ModelConfig& c) { return c.text.intermediate_size == 96; }},
      {"vocab_size", 151940, [](const ModelConfig& c) { return c.text.vocab_size == 151940; }},
      {"rms_norm_eps", 1e-5, [](const ModelConfig& c) { return c.text.rms_norm_eps == 1e-5f; }},
      {"rope_theta", 5e5, [](const ModelConfig& c) { return c.text.rope_theta == 5e5f; }},
      {"max_position_embeddings", 16384,
       [](const ModelConfig& c) { return c.text.max_position_embeddings == 16384; }},
      {"bos_token_id", 7, [](const ModelConfig& c) { return c.bos_token_id == 7; }},
      {"pad_token_id", 9, [](const ModelConfig& c) { return c.pad_token_id == 9; }},
      {"eos_token_id", Json::array({5, 6}),
       [](const ModelConfig& c) {
         return c.eos_token_ids == std::vector<int64_t>{5, 6};
       }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.key);
    Json base = TinyModelConfig();
    if (c.key == "hidden_size") {  // keep the vision merger's width equal to the text width
      base["vision_config"]["hidden_size"] = 128;
      base["rope_scaling"]["mrope_section"] = {4, 6, 6};
    }
    if (c.key == "num_attention_heads") base["rope_scaling"]["mrope_section"] = {1, 1, 2};
    // At the root only.
    Json root = base;
    root[c.key] = c.value;
    EXPECT_TRUE(c.read(ParseOk(root)));
    // In text_config only.
    Json nested = base;
    nested.erase(c.key);
    nested["text_config"] = {{c.key, c.value}};
    EXPECT_TRUE(c.read(ParseOk(nested)));
    // Both, the root stale: text_config is what transformers builds the model from.
    Json both = base;
    both[c.key] = base.contains(c.key) ? base[c.key] : Json(1);
    both["text_config"] = {{c.key, c.value}};
    EXPECT_TRUE(c.read(ParseOk(both)));
    // Null in text_config counts as absent.
    Json null_nested = root;
    null_nested["text_config"] = {{c.key, nullptr}};
    EXPECT_TRUE(c.read(ParseOk(null_nested)));
  }
}

TEST(ProConfigTest, DefaultsWhenNeitherPlaceHasTheField) {
  Json json = TinyModelConfig();
  for (const char* key : {"rms_norm_eps", "rope_theta", "max_position_embeddings", "hidden_act",
                          "bos_token_id", "eos_token_id", "pad_token_id"}) {
    json.erase(key);
  }
  json["text_config"] = Json::object();
  const ModelConfig config = ParseOk(json);
  EXPECT_TRUE(config.nested_text_config);
  EXPECT_EQ(config.text.rms_norm_eps, 1e-5f);  // Qwen2VLTextConfig defaults
  EXPECT_EQ(config.text.rope_theta, 1e6f);
  EXPECT_EQ(config.text.max_position_embeddings, 32768);
  EXPECT_EQ(config.text.hidden_act, "silu");
  EXPECT_EQ(config.bos_token_id, -1);
  EXPECT_EQ(config.pad_token_id, -1);
  EXPECT_TRUE(config.eos_token_ids.empty());
}

TEST(ProConfigTest, ContextIsMaxPositionEmbeddingsFromEitherPlace) {
  Json json = OnlyInTextConfig("max_position_embeddings");
  json["text_config"]["max_position_embeddings"] = 16384;
  EXPECT_EQ(ParseOk(json).text.max_position_embeddings, 16384);
  json["max_position_embeddings"] = 8192;  // stale root value
  EXPECT_EQ(ParseOk(json).text.max_position_embeddings, 16384);
  json["text_config"].erase("max_position_embeddings");
  EXPECT_EQ(ParseOk(json).text.max_position_embeddings, 8192);
}

// The vision token ids belong to the outer config: the root first, text_config as a fallback.
TEST(ProConfigTest, VisionTokenIdsRootFirst) {
  Json json = OnlyInTextConfig("image_token_id");
  EXPECT_EQ(ParseOk(json).image_token_id, 151655);
  json["image_token_id"] = 151600;
  EXPECT_EQ(ParseOk(json).image_token_id, 151600);
  Json none = TinyModelConfig();
  none.erase("vision_start_token_id");
  none["text_config"] = Json::object();
  EXPECT_TRUE(FailsWith(Parse(none), ErrorCode::kCorrupt, {"'vision_start_token_id'"}));
}

TEST(ProConfigTest, TextConfigMustBeAnObject) {
  Json json = TinyModelConfig();
  json["text_config"] = nullptr;
  EXPECT_FALSE(ParseOk(json).nested_text_config);
  for (const Json& bad : {Json("text"), Json::array({1}), Json(3)}) {
    json["text_config"] = bad;
    EXPECT_TRUE(FailsWith(Parse(json), ErrorCode::kCorrupt, {"'text_config'", kWhere.data()}));
  }
}

// ---------------------------------------------------------------------------------------------
// rope_scaling / rope_parameters.

TEST(ProConfigTest, RopeParametersInsteadOfRopeScaling) {
  for (bool nested : {false, true}) {
    SCOPED_TRACE(nested);
    Json json = TinyModelConfig();
    json.erase("rope_scaling");
    json.erase("rope_theta");
    const Json parameters = {
        {"rope_type", "default"}, {"mrope_section", {4, 2, 2}}, {"rope_theta", 250000.0}};
    if (nested) {
      json["text_config"] = {{"rope_parameters", parameters}};
    } else {
      json["rope_parameters"] = parameters;
    }
    const ModelConfig config = ParseOk(json);
    EXPECT_EQ(config.text.mrope_section, (std::vector<int>{4, 2, 2}));
    EXPECT_EQ(config.text.rope_theta, 250000.0f);
  }
}

TEST(ProConfigTest, RopeScalingAndRopeParametersTogether) {
  Json json = TinyModelConfig();  // rope_scaling [2, 3, 3], rope_theta 1e6
  json["rope_parameters"] = {{"rope_type", "default"}, {"mrope_section", {2, 3, 3}}};
  EXPECT_EQ(ParseOk(json).text.mrope_section, (std::vector<int>{2, 3, 3}));
  json["rope_parameters"]["rope_theta"] = 1e6;
  EXPECT_EQ(ParseOk(json).text.rope_theta, 1e6f);
  // rope_scaling in text_config, rope_parameters at the root.
  Json split = json;
  split["text_config"] = {{"rope_scaling", split["rope_scaling"]}};
  split.erase("rope_scaling");
  EXPECT_EQ(ParseOk(split).text.mrope_section, (std::vector<int>{2, 3, 3}));

  Json sections = json;
  sections["rope_parameters"]["mrope_section"] = {4, 2, 2};
  EXPECT_TRUE(FailsWith(Parse(sections), ErrorCode::kCorrupt,
                        {"'rope_scaling'", "'rope_parameters'", "mrope_section"}));
  Json theta = json;
  theta["rope_parameters"]["rope_theta"] = 10000.0;
  EXPECT_TRUE(FailsWith(Parse(theta), ErrorCode::kCorrupt, {"'rope_theta'", "rope_parameters"}));
}

TEST(ProConfigTest, RopeParametersErrors) {
  auto with = [](Json parameters) {
    Json json = TinyModelConfig();
    json.erase("rope_scaling");
    json["rope_parameters"] = std::move(parameters);
    return Parse(json);
  };
  EXPECT_TRUE(FailsWith(with({{"rope_type", "yarn"}, {"mrope_section", {2, 3, 3}}}),
                        ErrorCode::kUnsupported, {"rope_parameters", "'yarn'"}));
  EXPECT_TRUE(FailsWith(with({{"rope_type", "default"}}), ErrorCode::kCorrupt,
                        {"rope_parameters", "'mrope_section' is missing"}));
  EXPECT_TRUE(FailsWith(with({{"mrope_section", {2, 3, 3}}, {"rope_theta", "big"}}),
                        ErrorCode::kCorrupt, {"rope_parameters", "'rope_theta'"}));
  EXPECT_TRUE(FailsWith(with("default"), ErrorCode::kCorrupt, {"'rope_parameters'"}));
  // Null everywhere: nothing to read.
  EXPECT_TRUE(FailsWith(with(nullptr), ErrorCode::kCorrupt, {"'rope_scaling'", "mrope_section"}));
}

// ---------------------------------------------------------------------------------------------
// dtype.

TEST(ProConfigTest, DtypeOrTorchDtype) {
  Json json = TinyModelConfig();
  json.erase("torch_dtype");
  EXPECT_EQ(ParseOk(json).torch_dtype, "");
  json["dtype"] = "bfloat16";
  EXPECT_EQ(ParseOk(json).torch_dtype, "bfloat16");
  json["torch_dtype"] = "float32";  // the newer name wins
  EXPECT_EQ(ParseOk(json).torch_dtype, "bfloat16");
  json.erase("dtype");
  EXPECT_EQ(ParseOk(json).torch_dtype, "float32");
  json.erase("torch_dtype");
  json["text_config"] = {{"dtype", "float16"}};
  EXPECT_EQ(ParseOk(json).torch_dtype, "float16");
  json["dtype"] = 16;
  EXPECT_TRUE(FailsWith(Parse(json), ErrorCode::kCorrupt, {"'dtype'"}));
}

}  // namespace
}  // namespace mineru::model
