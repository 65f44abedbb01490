// SPDX-License-Identifier: Apache-2.0
// ParseModelConfig on the config.json layouts MinerU2.5 checkpoints ship (text fields at the
// root, or nested in "text_config") and on broken files. Every bad input must come back as an
// Error (never a crash or an exception) with the expected code and a message that names the
// offending field and the file, since that message is all a user sees of a bad download.
#include "model/config.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "base/json.h"
#include "checkpoint_test_util.h"
#include "devtools/random_checkpoint.h"

namespace mineru::model {
namespace {

using devtools::RealModelConfig;
using devtools::TinyModelConfig;
constexpr std::string_view kWhere = "ckpt/config.json";

Result<ModelConfig> Parse(const Json& json) { return ParseModelConfig(json, kWhere); }

// Passes when `result` is an error of `code` whose message names the file and every part.
template <class T>
::testing::AssertionResult FailsWith(const Result<T>& result, ErrorCode code,
                                     std::vector<std::string> parts) {
  parts.emplace_back(kWhere);
  return testing::FailsWith(result, code, parts);
}

// The later MinerU2.5 layout: the text model's fields (and tie_word_embeddings) moved into
// "text_config", nothing of them left at the root.
Json Nested(Json root) {
  Json text = Json::object();
  for (const char* key : {"hidden_size", "num_hidden_layers", "num_attention_heads",
                          "num_key_value_heads", "intermediate_size", "vocab_size", "rms_norm_eps",
                          "rope_theta", "rope_scaling", "tie_word_embeddings"}) {
    if (root.contains(key)) {
      text[key] = root[key];
      root.erase(key);
    }
  }
  root["text_config"] = text;
  return root;
}

void ExpectSameText(const TextConfig& a, const TextConfig& b) {
  EXPECT_EQ(a.hidden_size, b.hidden_size);
  EXPECT_EQ(a.num_layers, b.num_layers);
  EXPECT_EQ(a.num_heads, b.num_heads);
  EXPECT_EQ(a.num_kv_heads, b.num_kv_heads);
  EXPECT_EQ(a.intermediate_size, b.intermediate_size);
  EXPECT_EQ(a.vocab_size, b.vocab_size);
  EXPECT_EQ(a.rms_norm_eps, b.rms_norm_eps);
  EXPECT_EQ(a.rope_theta, b.rope_theta);
  EXPECT_EQ(a.mrope_section, b.mrope_section);
  EXPECT_EQ(a.max_position_embeddings, b.max_position_embeddings);
  EXPECT_EQ(a.hidden_act, b.hidden_act);
  EXPECT_EQ(a.use_sliding_window, b.use_sliding_window);
}

TEST(ConfigTest, TinyRootLayout) {
  auto config = Parse(TinyModelConfig());
  ASSERT_TRUE(config) << config.error().ToString();
  EXPECT_EQ(config->model_type, "qwen2_vl");
  const TextConfig& t = config->text;
  EXPECT_EQ(t.hidden_size, 64);
  EXPECT_EQ(t.num_layers, 2);
  EXPECT_EQ(t.num_heads, 4);
  EXPECT_EQ(t.num_kv_heads, 2);
  EXPECT_EQ(t.head_dim(), 16);
  EXPECT_EQ(t.intermediate_size, 128);
  EXPECT_EQ(t.vocab_size, 151936);
  EXPECT_EQ(t.rms_norm_eps, 1e-6f);
  EXPECT_EQ(t.rope_theta, 1e6f);
  EXPECT_EQ(t.mrope_section, (std::vector<int>{2, 3, 3}));
  EXPECT_EQ(t.max_position_embeddings, 32768);
  EXPECT_EQ(t.hidden_act, "silu");
  EXPECT_FALSE(t.use_sliding_window);
  const VisionConfig& v = config->vision;
  EXPECT_EQ(v.depth, 2);
  EXPECT_EQ(v.embed_dim, 64);
  EXPECT_EQ(v.num_heads, 4);
  EXPECT_EQ(v.mlp_hidden, 256);
  EXPECT_EQ(v.in_channels, 3);
  EXPECT_EQ(v.patch_size, 14);
  EXPECT_EQ(v.temporal_patch_size, 2);
  EXPECT_EQ(v.spatial_merge_size, 2);
  EXPECT_EQ(v.out_hidden, 64);
  EXPECT_EQ(v.hidden_act, "quick_gelu");
  EXPECT_EQ(v.patch_dim(), 3 * 2 * 14 * 14);
  EXPECT_TRUE(config->tie_word_embeddings);
  EXPECT_EQ(config->image_token_id, 151655);
  EXPECT_EQ(config->video_token_id, 151656);
  EXPECT_EQ(config->vision_start_token_id, 151652);
  EXPECT_EQ(config->vision_end_token_id, 151653);
  EXPECT_EQ(config->bos_token_id, 151643);
  EXPECT_EQ(config->eos_token_ids, (std::vector<int64_t>{151645}));
  EXPECT_EQ(config->torch_dtype, "bfloat16");
}

TEST(ConfigTest, RealRootLayout) {
  auto config = Parse(RealModelConfig());
  ASSERT_TRUE(config) << config.error().ToString();
  EXPECT_EQ(config->text.hidden_size, 896);
  EXPECT_EQ(config->text.num_layers, 24);
  EXPECT_EQ(config->text.num_heads, 14);
  EXPECT_EQ(config->text.num_kv_heads, 2);
  EXPECT_EQ(config->text.head_dim(), 64);
  EXPECT_EQ(config->text.intermediate_size, 4864);
  EXPECT_EQ(config->text.mrope_section, (std::vector<int>{8, 12, 12}));
  EXPECT_EQ(config->vision.depth, 32);
  EXPECT_EQ(config->vision.embed_dim, 1280);
  EXPECT_EQ(config->vision.num_heads, 16);
  EXPECT_EQ(config->vision.mlp_hidden, 5120);
  EXPECT_EQ(config->vision.in_channels, 3);  // from "in_chans" alone
  EXPECT_EQ(config->vision.out_hidden, 896);
  EXPECT_TRUE(config->tie_word_embeddings);
}

TEST(ConfigTest, GoldenConfigFile) {
  // The committed tiny config carries both "in_channels" and "in_chans" (equal).
  const std::string path = std::string(MINERU_TEST_DATA_DIR) + "/qwen2vl-tiny/model/config.json";
  auto json = ReadJsonFile(path, 1 << 20);
  ASSERT_TRUE(json) << json.error().ToString();
  auto golden = ParseModelConfig(*json, path);
  ASSERT_TRUE(golden) << golden.error().ToString();
  auto tiny = Parse(TinyModelConfig());
  ASSERT_TRUE(tiny);
  ExpectSameText(golden->text, tiny->text);
  EXPECT_EQ(golden->vision.in_channels, 3);
  EXPECT_TRUE(golden->tie_word_embeddings);
}

TEST(ConfigTest, NestedTextConfigParsesLikeRoot) {
  for (const Json& root : {TinyModelConfig(), RealModelConfig()}) {
    const Json nested = Nested(root);
    ASSERT_FALSE(nested.contains("hidden_size"));
    ASSERT_FALSE(nested.contains("tie_word_embeddings"));
    ASSERT_TRUE(nested["text_config"].contains("rope_scaling"));
    auto a = Parse(root);
    auto b = Parse(nested);
    ASSERT_TRUE(a) << a.error().ToString();
    ASSERT_TRUE(b) << b.error().ToString();
    ExpectSameText(a->text, b->text);
    EXPECT_EQ(a->vision.embed_dim, b->vision.embed_dim);
    EXPECT_EQ(a->vision.out_hidden, b->vision.out_hidden);
    EXPECT_TRUE(b->tie_word_embeddings);  // from text_config
    EXPECT_EQ(a->image_token_id, b->image_token_id);
    EXPECT_EQ(a->eos_token_ids, b->eos_token_ids);
  }
}

TEST(ConfigTest, NestedTextConfigWinsOverStaleRootValues) {
  // When both exist, text_config is the text model's own config.
  Json json = Nested(TinyModelConfig());
  json["hidden_size"] = 32;
  json["num_hidden_layers"] = 7;
  json["text_config"]["bos_token_id"] = 11;
  json["text_config"]["eos_token_id"] = {12, 13};
  auto config = Parse(json);
  ASSERT_TRUE(config) << config.error().ToString();
  EXPECT_EQ(config->text.hidden_size, 64);
  EXPECT_EQ(config->text.num_layers, 2);
  EXPECT_EQ(config->bos_token_id, 11);
  EXPECT_EQ(config->eos_token_ids, (std::vector<int64_t>{12, 13}));
}

TEST(ConfigTest, NestedFieldsFallBackToRoot) {
  // A text_config holding only some fields: the rest come from the root.
  Json json = TinyModelConfig();
  json["text_config"] = {{"num_hidden_layers", 3}};
  auto config = Parse(json);
  ASSERT_TRUE(config) << config.error().ToString();
  EXPECT_EQ(config->text.num_layers, 3);
  EXPECT_EQ(config->text.hidden_size, 64);
}

TEST(ConfigTest, InChannelsSpellings) {
  {
    Json json = TinyModelConfig();
    json["vision_config"].erase("in_channels");
    json["vision_config"]["in_chans"] = 1;
    auto config = Parse(json);
    ASSERT_TRUE(config) << config.error().ToString();
    EXPECT_EQ(config->vision.in_channels, 1);
    EXPECT_EQ(config->vision.patch_dim(), 1 * 2 * 14 * 14);
  }
  {
    Json json = TinyModelConfig();
    json["vision_config"].erase("in_chans");
    json["vision_config"]["in_channels"] = 4;
    auto config = Parse(json);
    ASSERT_TRUE(config) << config.error().ToString();
    EXPECT_EQ(config->vision.in_channels, 4);
  }
  {
    Json json = TinyModelConfig();
    json["vision_config"]["in_channels"] = 3;
    json["vision_config"]["in_chans"] = 3;
    auto config = Parse(json);
    ASSERT_TRUE(config) << config.error().ToString();
    EXPECT_EQ(config->vision.in_channels, 3);
  }
  {
    Json json = TinyModelConfig();
    json["vision_config"].erase("in_channels");
    json["vision_config"].erase("in_chans");
    auto config = Parse(json);
    ASSERT_TRUE(config) << config.error().ToString();
    EXPECT_EQ(config->vision.in_channels, 3);  // HF default
  }
  {
    Json json = TinyModelConfig();
    json["vision_config"]["in_channels"] = 3;
    json["vision_config"]["in_chans"] = 1;
    EXPECT_TRUE(FailsWith(Parse(json), ErrorCode::kCorrupt,
                          {"vision_config", "'in_channels'", "'in_chans'"}));
  }
  {
    Json json = TinyModelConfig();
    json["vision_config"]["in_channels"] = 0;
    EXPECT_TRUE(FailsWith(Parse(json), ErrorCode::kCorrupt, {"'in_channels'"}));
  }
}

TEST(ConfigTest, RopeScalingTypes) {
  const std::vector<Json> accepted = {
      {{"type", "mrope"}, {"mrope_section", {2, 3, 3}}},
      {{"type", "default"}, {"mrope_section", {2, 3, 3}}},
      {{"rope_type", "default"}, {"mrope_section", {2, 3, 3}}},
      {{"type", "mrope"}, {"rope_type", "default"}, {"mrope_section", {2, 3, 3}}},
      {{"mrope_section", {4, 2, 2}}},  // no type: HF treats it as default
  };
  for (const Json& scaling : accepted) {
    SCOPED_TRACE(scaling.dump());
    Json json = TinyModelConfig();
    json["rope_scaling"] = scaling;
    auto config = Parse(json);
    ASSERT_TRUE(config) << config.error().ToString();
    EXPECT_EQ(config->text.mrope_section, scaling["mrope_section"].get<std::vector<int>>());
  }
}

TEST(ConfigTest, RopeScalingErrors) {
  auto with = [](Json scaling) {
    Json json = TinyModelConfig();
    json["rope_scaling"] = std::move(scaling);
    return Parse(json);
  };
  EXPECT_TRUE(FailsWith(with({{"type", "yarn"}, {"mrope_section", {2, 3, 3}}}),
                        ErrorCode::kUnsupported, {"rope_scaling", "'yarn'"}));
  EXPECT_TRUE(FailsWith(with({{"rope_type", "yarn"}, {"mrope_section", {2, 3, 3}}}),
                        ErrorCode::kUnsupported, {"rope_scaling", "'yarn'"}));
  EXPECT_TRUE(
      FailsWith(with({{"type", "mrope"}, {"rope_type", "linear"}, {"mrope_section", {2, 3, 3}}}),
                ErrorCode::kUnsupported, {"'linear'"}));
  EXPECT_TRUE(FailsWith(with({{"type", 3}, {"mrope_section", {2, 3, 3}}}), ErrorCode::kCorrupt,
                        {"rope_scaling", "'type'"}));
  // head_dim 16: the sections must sum to 8.
  EXPECT_TRUE(FailsWith(with({{"type", "mrope"}, {"mrope_section", {2, 3, 4}}}),
                        ErrorCode::kCorrupt, {"mrope_section", "9", "8"}));
  EXPECT_TRUE(FailsWith(with({{"type", "mrope"}}), ErrorCode::kCorrupt,
                        {"rope_scaling", "'mrope_section' is missing"}));
  EXPECT_TRUE(FailsWith(with({{"type", "mrope"}, {"mrope_section", {4, 4}}}), ErrorCode::kCorrupt,
                        {"'mrope_section'", "3 entries"}));
  EXPECT_TRUE(FailsWith(with({{"type", "mrope"}, {"mrope_section", {2, -3, 9}}}),
                        ErrorCode::kCorrupt, {"'mrope_section'", "-3"}));
  EXPECT_TRUE(FailsWith(with({{"type", "mrope"}, {"mrope_section", {2, 3, "3"}}}),
                        ErrorCode::kCorrupt, {"'mrope_section'"}));
  EXPECT_TRUE(FailsWith(with("mrope"), ErrorCode::kCorrupt, {"'rope_scaling'"}));
  Json json = TinyModelConfig();
  json.erase("rope_scaling");
  EXPECT_TRUE(FailsWith(Parse(json), ErrorCode::kCorrupt, {"'rope_scaling'", "mrope_section"}));
}

TEST(ConfigTest, TieWordEmbeddings) {
  Json root_true = TinyModelConfig();
  ASSERT_EQ(root_true["tie_word_embeddings"], true);
  EXPECT_TRUE(Parse(root_true)->tie_word_embeddings);

  Json nested_true = TinyModelConfig();
  nested_true.erase("tie_word_embeddings");
  nested_true["text_config"] = {{"tie_word_embeddings", true}};
  EXPECT_TRUE(Parse(nested_true)->tie_word_embeddings);

  Json absent = TinyModelConfig();
  absent.erase("tie_word_embeddings");
  EXPECT_FALSE(Parse(absent)->tie_word_embeddings);  // HF default: false

  Json root_false = TinyModelConfig();
  root_false["tie_word_embeddings"] = false;
  EXPECT_FALSE(Parse(root_false)->tie_word_embeddings);

  // Either place saying true ties them.
  Json mixed = root_false;
  mixed["text_config"] = {{"tie_word_embeddings", true}};
  EXPECT_TRUE(Parse(mixed)->tie_word_embeddings);

  Json wrong = TinyModelConfig();
  wrong["tie_word_embeddings"] = "true";
  EXPECT_TRUE(FailsWith(Parse(wrong), ErrorCode::kCorrupt, {"'tie_word_embeddings'"}));
  Json wrong_nested = absent;
  wrong_nested["text_config"] = {{"tie_word_embeddings", 1}};
  EXPECT_TRUE(FailsWith(Parse(wrong_nested), ErrorCode::kCorrupt, {"'tie_word_embeddings'"}));
}

TEST(ConfigTest, MissingRequiredFields) {
  struct Case {
    std::string vision_key;  // empty: a root key
    std::string key;
    std::vector<std::string> message;
  };
  const std::vector<Case> cases = {
      {"", "hidden_size", {"required field 'hidden_size'"}},
      {"", "num_hidden_layers", {"required field 'num_hidden_layers'"}},
      {"", "num_attention_heads", {"required field 'num_attention_heads'"}},
      {"", "intermediate_size", {"required field 'intermediate_size'"}},
      {"", "vocab_size", {"required field 'vocab_size'"}},
      {"", "vision_config", {"'vision_config'"}},
      {"", "image_token_id", {"required field 'image_token_id'"}},
      {"", "vision_start_token_id", {"required field 'vision_start_token_id'"}},
      {"vision_config", "depth", {"vision_config", "required field 'depth'"}},
      {"vision_config", "embed_dim", {"vision_config", "required field 'embed_dim'"}},
      {"vision_config", "num_heads", {"vision_config", "required field 'num_heads'"}},
      {"vision_config", "hidden_size", {"vision_config", "required field 'hidden_size'"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.vision_key + "." + c.key);
    for (bool nested : {false, true}) {
      Json json = TinyModelConfig();
      if (nested) json = Nested(json);
      if (c.vision_key.empty()) {
        json.erase(c.key);
        if (nested) json["text_config"].erase(c.key);
      } else {
        json[c.vision_key].erase(c.key);
      }
      EXPECT_TRUE(FailsWith(Parse(json), ErrorCode::kCorrupt, c.message)) << "nested " << nested;
    }
  }
  // null counts as absent.
  Json json = TinyModelConfig();
  json["hidden_size"] = nullptr;
  EXPECT_TRUE(FailsWith(Parse(json), ErrorCode::kCorrupt, {"required field 'hidden_size'"}));
  json = TinyModelConfig();
  json["vision_config"] = "none";
  EXPECT_TRUE(FailsWith(Parse(json), ErrorCode::kCorrupt, {"'vision_config'"}));
}

TEST(ConfigTest, WrongTypes) {
  struct Case {
    std::vector<std::string> path;  // keys from the root
    Json value;
    std::string key;
  };
  const std::vector<Case> cases = {
      {{"hidden_size"}, "64", "'hidden_size' must be an integer"},
      {{"hidden_size"}, 64.5, "'hidden_size' must be an integer"},
      {{"num_hidden_layers"}, true, "'num_hidden_layers' must be an integer"},
      {{"num_attention_heads"}, Json::array({4}), "'num_attention_heads' must be an integer"},
      {{"num_key_value_heads"}, "2", "'num_key_value_heads' must be an integer"},
      {{"vocab_size"}, "151936", "'vocab_size' must be an integer"},
      {{"rms_norm_eps"}, "1e-6", "'rms_norm_eps' must be a number"},
      {{"rope_theta"}, "1e6", "'rope_theta' must be a number"},
      {{"max_position_embeddings"}, "32768", "'max_position_embeddings' must be an integer"},
      {{"hidden_act"}, 1, "'hidden_act' must be a string"},
      {{"use_sliding_window"}, "false", "'use_sliding_window' must be true or false"},
      {{"image_token_id"}, "151655", "'image_token_id' must be an integer"},
      {{"eos_token_id"}, "151645", "'eos_token_id' must be an array of integers"},
      {{"eos_token_id"}, Json::array({1, "2"}), "'eos_token_id' must be an array of integers"},
      {{"torch_dtype"}, 16, "'torch_dtype' must be a string"},
      {{"vision_config", "depth"}, "2", "'depth' must be an integer"},
      {{"vision_config", "embed_dim"}, "64", "'embed_dim' must be an integer"},
      {{"vision_config", "patch_size"}, "14", "'patch_size' must be an integer"},
      {{"vision_config", "mlp_ratio"}, "4", "'mlp_ratio' must be a number"},
      {{"vision_config", "hidden_act"}, false, "'hidden_act' must be a string"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.path.back() + " = " + c.value.dump());
    Json json = TinyModelConfig();
    Json* target = &json;
    for (size_t i = 0; i + 1 < c.path.size(); ++i) target = &(*target)[c.path[i]];
    (*target)[c.path.back()] = c.value;
    EXPECT_TRUE(FailsWith(Parse(json), ErrorCode::kCorrupt, {c.key}));
  }
  // model_type of the wrong type reads as a wrong type, not as an unknown model.
  Json json = TinyModelConfig();
  json["model_type"] = 2;
  EXPECT_TRUE(FailsWith(Parse(json), ErrorCode::kCorrupt, {"'model_type' must be a string"}));
  EXPECT_TRUE(FailsWith(Parse(Json::array({1, 2})), ErrorCode::kCorrupt, {"JSON object"}));
  EXPECT_TRUE(FailsWith(Parse(Json("qwen2_vl")), ErrorCode::kCorrupt, {"JSON object"}));
}

TEST(ConfigTest, IntegralFloatsAreIntegers) {
  // Some tools write 64.0 for 64; the value is what counts.
  Json json = TinyModelConfig();
  json["hidden_size"] = 64.0;
  json["vision_config"]["depth"] = 2.0;
  auto config = Parse(json);
  ASSERT_TRUE(config) << config.error().ToString();
  EXPECT_EQ(config->text.hidden_size, 64);
  EXPECT_EQ(config->vision.depth, 2);
}

TEST(ConfigTest, OutOfRangeDimensions) {
  struct Case {
    std::vector<std::string> path;
    Json value;
    std::string key;
  };
  const std::vector<Case> cases = {
      {{"hidden_size"}, 0, "'hidden_size' = 0"},
      {{"hidden_size"}, -64, "'hidden_size' = -64"},
      {{"num_hidden_layers"}, 0, "'num_hidden_layers' = 0"},
      {{"num_hidden_layers"}, 1025, "'num_hidden_layers' = 1025"},
      {{"num_attention_heads"}, 0, "'num_attention_heads' = 0"},
      {{"num_attention_heads"}, -4, "'num_attention_heads' = -4"},
      {{"num_key_value_heads"}, 0, "'num_key_value_heads' = 0"},
      {{"intermediate_size"}, -128, "'intermediate_size' = -128"},
      {{"vocab_size"}, 0, "'vocab_size' = 0"},
      {{"hidden_size"}, int64_t{1} << 40, "'hidden_size' = 1099511627776"},
      {{"max_position_embeddings"}, 0, "'max_position_embeddings' = 0"},
      {{"vision_config", "depth"}, 0, "'depth' = 0"},
      {{"vision_config", "embed_dim"}, -64, "'embed_dim' = -64"},
      {{"vision_config", "num_heads"}, 0, "'num_heads' = 0"},
      {{"vision_config", "hidden_size"}, 0, "'hidden_size' = 0"},
      {{"vision_config", "patch_size"}, 0, "'patch_size' = 0"},
      {{"vision_config", "temporal_patch_size"}, -2, "'temporal_patch_size' = -2"},
      {{"vision_config", "spatial_merge_size"}, 0, "'spatial_merge_size' = 0"},
      {{"vision_config", "mlp_ratio"}, 0, "'mlp_ratio'"},
      {{"vision_config", "mlp_ratio"}, -1.5, "'mlp_ratio'"},
      {{"rms_norm_eps"}, 0, "rms_norm_eps"},
      {{"rms_norm_eps"}, -1e-6, "rms_norm_eps"},
      {{"rope_theta"}, 1, "rope_theta"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.path.back() + " = " + c.value.dump());
    Json json = TinyModelConfig();
    Json* target = &json;
    for (size_t i = 0; i + 1 < c.path.size(); ++i) target = &(*target)[c.path[i]];
    (*target)[c.path.back()] = c.value;
    EXPECT_TRUE(FailsWith(Parse(json), ErrorCode::kCorrupt, {c.key}));
  }
}

TEST(ConfigTest, HeadsMustDivideWidths) {
  auto parse_with = [](auto edit) {
    Json json = TinyModelConfig();
    edit(json);
    return Parse(json);
  };
  // 64 / 5 heads.
  EXPECT_TRUE(FailsWith(parse_with([](Json& j) { j["num_attention_heads"] = 5; }),
                        ErrorCode::kCorrupt, {"hidden_size 64", "5 heads"}));
  // 4 heads / 3 kv heads.
  EXPECT_TRUE(FailsWith(parse_with([](Json& j) { j["num_key_value_heads"] = 3; }),
                        ErrorCode::kCorrupt, {"4 heads", "3 kv heads"}));
  // More kv heads than heads.
  EXPECT_TRUE(FailsWith(parse_with([](Json& j) { j["num_key_value_heads"] = 8; }),
                        ErrorCode::kCorrupt, {"8 kv heads"}));
  // 64 heads of width 1: rotary needs an even head width.
  EXPECT_TRUE(FailsWith(parse_with([](Json& j) {
                          j["num_attention_heads"] = 64;
                          j["num_key_value_heads"] = 64;
                        }),
                        ErrorCode::kCorrupt, {"64 heads"}));
  // Vision: 64 / 3 heads, and heads of width 2 (the 2-D rotary needs a multiple of 4).
  EXPECT_TRUE(FailsWith(parse_with([](Json& j) { j["vision_config"]["num_heads"] = 3; }),
                        ErrorCode::kCorrupt, {"vision_config", "embed_dim 64", "3 heads"}));
  EXPECT_TRUE(FailsWith(parse_with([](Json& j) { j["vision_config"]["num_heads"] = 32; }),
                        ErrorCode::kCorrupt, {"vision_config", "32 heads"}));
  // A config with heads of other widths that still divide is accepted (head_dim 32, section 16).
  auto ok = parse_with([](Json& j) {
    j["num_attention_heads"] = 2;
    j["num_key_value_heads"] = 1;
    j["rope_scaling"]["mrope_section"] = {4, 6, 6};
  });
  ASSERT_TRUE(ok) << ok.error().ToString();
  EXPECT_EQ(ok->text.head_dim(), 32);
}

TEST(ConfigTest, UnsupportedModels) {
  Json json = TinyModelConfig();
  json["model_type"] = "qwen2_5_vl";
  EXPECT_TRUE(FailsWith(Parse(json), ErrorCode::kUnsupported, {"'qwen2_5_vl'", "model_type"}));
  json.erase("model_type");
  EXPECT_TRUE(FailsWith(Parse(json), ErrorCode::kUnsupported, {"model_type"}));

  json = TinyModelConfig();
  json["hidden_act"] = "gelu";
  EXPECT_TRUE(FailsWith(Parse(json), ErrorCode::kUnsupported, {"hidden_act", "'gelu'"}));
  json = Nested(TinyModelConfig());
  json["text_config"]["hidden_act"] = "relu";
  EXPECT_TRUE(FailsWith(Parse(json), ErrorCode::kUnsupported, {"hidden_act", "'relu'"}));

  json = TinyModelConfig();
  json["vision_config"]["hidden_act"] = "silu";
  EXPECT_TRUE(
      FailsWith(Parse(json), ErrorCode::kUnsupported, {"vision_config", "hidden_act", "'silu'"}));
  json["vision_config"]["hidden_act"] = "gelu";  // the other activation HF's vision MLP has
  EXPECT_TRUE(Parse(json));

  json = TinyModelConfig();
  json["use_sliding_window"] = true;
  EXPECT_TRUE(FailsWith(Parse(json), ErrorCode::kUnsupported, {"use_sliding_window"}));
}

TEST(ConfigTest, VisionOutputMustMatchTextWidth) {
  Json json = TinyModelConfig();
  json["vision_config"]["hidden_size"] = 32;
  EXPECT_TRUE(FailsWith(Parse(json), ErrorCode::kCorrupt,
                        {"vision_config.hidden_size 32", "hidden_size 64"}));
}

TEST(ConfigTest, SpecialTokensMustBeInVocabulary) {
  Json json = TinyModelConfig();
  json["image_token_id"] = 151936;
  EXPECT_TRUE(FailsWith(Parse(json), ErrorCode::kCorrupt, {"151936", "vocabulary"}));
  json = TinyModelConfig();
  json["vision_start_token_id"] = -1;
  EXPECT_TRUE(FailsWith(Parse(json), ErrorCode::kCorrupt, {"-1", "vocabulary"}));
}

TEST(ConfigTest, HuggingFaceDefaults) {
  Json json = TinyModelConfig();
  for (const char* key :
       {"num_key_value_heads", "rms_norm_eps", "rope_theta", "max_position_embeddings",
        "hidden_act", "use_sliding_window", "video_token_id", "vision_end_token_id", "bos_token_id",
        "eos_token_id", "torch_dtype"}) {
    json.erase(key);
  }
  for (const char* key :
       {"patch_size", "temporal_patch_size", "spatial_merge_size", "mlp_ratio", "hidden_act"}) {
    json["vision_config"].erase(key);
  }
  auto config = Parse(json);
  ASSERT_TRUE(config) << config.error().ToString();
  const TextConfig& t = config->text;
  EXPECT_EQ(t.num_kv_heads, t.num_heads);  // Qwen2VLConfig: num_key_value_heads = heads
  EXPECT_EQ(t.num_kv_heads, 4);
  EXPECT_EQ(t.rms_norm_eps, 1e-5f);  // Qwen2VLConfig default, not the model's 1e-6
  EXPECT_EQ(t.rope_theta, 1e6f);
  EXPECT_EQ(t.max_position_embeddings, 32768);
  EXPECT_EQ(t.hidden_act, "silu");
  EXPECT_FALSE(t.use_sliding_window);
  const VisionConfig& v = config->vision;
  EXPECT_EQ(v.patch_size, 14);
  EXPECT_EQ(v.temporal_patch_size, 2);
  EXPECT_EQ(v.spatial_merge_size, 2);
  EXPECT_EQ(v.mlp_hidden, 4 * 64);
  EXPECT_EQ(v.hidden_act, "quick_gelu");
  EXPECT_EQ(config->video_token_id, -1);
  EXPECT_EQ(config->vision_end_token_id, -1);
  EXPECT_EQ(config->bos_token_id, -1);
  EXPECT_TRUE(config->eos_token_ids.empty());
  EXPECT_EQ(config->torch_dtype, "");

  // Stated values are taken as they are.
  json["max_position_embeddings"] = 4096;
  json["rms_norm_eps"] = 1e-6;
  json["eos_token_id"] = {151645, 151643};
  json["vision_config"]["mlp_ratio"] = 2.5;  // HF: int(embed_dim * mlp_ratio)
  config = Parse(json);
  ASSERT_TRUE(config) << config.error().ToString();
  EXPECT_EQ(config->text.max_position_embeddings, 4096);
  EXPECT_EQ(config->text.rms_norm_eps, 1e-6f);
  EXPECT_EQ(config->eos_token_ids, (std::vector<int64_t>{151645, 151643}));
  EXPECT_EQ(config->vision.mlp_hidden, 160);
  json["eos_token_id"] = nullptr;
  config = Parse(json);
  ASSERT_TRUE(config) << config.error().ToString();
  EXPECT_TRUE(config->eos_token_ids.empty());
}

// Values past a field's range must be refused, not wrapped into range by a narrowing cast
// (2^32 + 2 would become 2 as an int).
TEST(ConfigTest, HugeValuesAreRefusedNotTruncated) {
  Json json = TinyModelConfig();
  json["num_key_value_heads"] = (int64_t{1} << 32) + 2;  // int: 2
  EXPECT_TRUE(FailsWith(Parse(json), ErrorCode::kCorrupt, {"num_key_value_heads"}));
  json = TinyModelConfig();
  json["vision_config"]["in_channels"] = (int64_t{1} << 32) + 3;  // int: 3
  json["vision_config"]["in_chans"] = (int64_t{1} << 32) + 3;
  EXPECT_TRUE(FailsWith(Parse(json), ErrorCode::kCorrupt, {"in_channels"}));
  json = TinyModelConfig();
  json["vision_config"]["patch_size"] = (int64_t{1} << 32) + 14;  // int: 14
  EXPECT_TRUE(FailsWith(Parse(json), ErrorCode::kCorrupt, {"patch_size"}));
  json = TinyModelConfig();
  json["vision_config"]["spatial_merge_size"] = (int64_t{1} << 32) + 2;  // int: 2
  EXPECT_TRUE(FailsWith(Parse(json), ErrorCode::kCorrupt, {"spatial_merge_size"}));
}

}  // namespace
}  // namespace mineru::model
