// SPDX-License-Identifier: Apache-2.0
// MinerU2.5-Pro-2605's file layout end to end: `make-model --config pro-tiny` writes it, and the
// runtime reads it back (Model::Load, the tokenizer with its 31-token table, the chat template,
// the preprocessor's min_pixels, the stop set, an engine over it); the profile chosen for it and
// for the 2509 tiny model (ChooseModelProfile), the profile token check, and what `inspect`
// prints. Needs the Qwen2 tokenizer fixture (text_qwen_tokenizer in tests/text).
#include "apps/model_profile.h"

#include <gtest/gtest.h>

#include <array>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/json.h"
#include "cli_test_util.h"
#include "engine/engine.h"
#include "engine/generation_config.h"
#include "image/qwen2vl_preprocess.h"
#include "model/model.h"
#include "text/chat_template.h"
#include "text/chat_template_file.h"
#include "text/tokenizer.h"

namespace mineru::apps {
namespace {

namespace fs = std::filesystem;

using testing::CliResult;
using testing::Describe;
using testing::FailedWith;
using testing::ReadFile;
using testing::RunCli;
using testing::ScratchRoot;
using testing::Succeeded;
using testing::UsageError;
using testing::WriteFile;

const std::string kQwen = MINERU_QWEN_TOKENIZER;

// make-model --config `config` with the Qwen2 vocabulary, once per binary.
std::string Made(const std::string& config) {
  static std::map<std::string, std::string>* made = new std::map<std::string, std::string>;
  if (const auto it = made->find(config); it != made->end()) return it->second;
  const std::string dir = ScratchRoot() + "/made-" + config;
  const CliResult r = RunCli(
      {"make-model", "--config", config, "--seed", "1", "-o", dir, "--tokenizer-source", kQwen});
  EXPECT_TRUE(Succeeded(r));
  (*made)[config] = dir;
  return dir;
}

std::string ProTiny() { return Made("pro-tiny"); }
std::string Tiny() { return Made("tiny"); }

Json ReadJson(const std::string& path) {
  auto json = ReadJsonFile(path, 64 << 20);
  EXPECT_TRUE(json) << json.error().ToString();
  return json ? *json : Json();
}

bool Has(const CliResult& r, const std::string& line) {
  return r.out.find(line) != std::string::npos;
}

// ---------------------------------------------------------------------------------------------
// What make-model pro-tiny writes, read back.

TEST(ProTinyTest, WritesProFiles) {
  const std::string dir = ProTiny();
  for (const char* name : {"config.json", "preprocessor_config.json", "generation_config.json",
                           "tokenizer.json", "tokenizer_config.json", "chat_template.jinja",
                           "special_tokens_map.json", "added_tokens.json", "model.safetensors"}) {
    EXPECT_TRUE(fs::exists(dir + "/" + name)) << name;
  }
  const Json config = ReadJson(dir + "/config.json");
  EXPECT_TRUE(config.contains("text_config"));
  EXPECT_FALSE(config.contains("tie_word_embeddings"));
  EXPECT_EQ(config.value("dtype", ""), "bfloat16");
  const Json generation = ReadJson(dir + "/generation_config.json");
  EXPECT_EQ(generation.value("temperature", 0.0), 0.01);
  EXPECT_EQ(generation.value("top_k", 0), 1);
  EXPECT_EQ(generation.value("top_p", 0.0), 0.001);
  EXPECT_EQ(generation["eos_token_id"], Json::array({151645, 151643}));
  const Json processor = ReadJson(dir + "/preprocessor_config.json");
  EXPECT_EQ(processor.value("min_pixels", 0), 50176);
  EXPECT_EQ(processor.value("max_pixels", 0), 1605632);
  EXPECT_EQ(ReadFile(dir + "/chat_template.jinja"), text::kQwen2VlChatTemplate);
  EXPECT_FALSE(ReadJson(dir + "/tokenizer_config.json").contains("chat_template"));
  // The 2509 tiny model keeps its two tokenizer files only.
  EXPECT_FALSE(fs::exists(Tiny() + "/chat_template.jinja"));
  EXPECT_FALSE(fs::exists(Tiny() + "/added_tokens.json"));
  EXPECT_FALSE(fs::exists(Tiny() + "/special_tokens_map.json"));
}

TEST(ProTinyTest, LoadsAsTheRuntimeReadsIt) {
  const std::string dir = ProTiny();
  auto model = model::Model::Load(dir);
  ASSERT_TRUE(model) << model.error().ToString();
  const model::Checkpoint& checkpoint = (*model)->checkpoint();
  EXPECT_TRUE(checkpoint.config().nested_text_config);
  EXPECT_TRUE(checkpoint.config().tie_word_embeddings);
  EXPECT_TRUE(checkpoint.tied_embeddings());
  EXPECT_FALSE(checkpoint.Has("lm_head.weight"));
  EXPECT_EQ(checkpoint.tensors().size(), 57u);  // the tiny golden shape
  EXPECT_EQ(checkpoint.config().torch_dtype, "bfloat16");

  auto tokenizer = text::Tokenizer::Load(dir + "/tokenizer.json");
  ASSERT_TRUE(tokenizer) << tokenizer.error().ToString();
  const auto& added = (*tokenizer)->added_tokens();
  ASSERT_EQ(added.size(), 31u);
  EXPECT_EQ(added.front().id, 151643);
  EXPECT_EQ(added.back().id, 151673);
  EXPECT_EQ(added.back().content, "<|paratext|>");
  for (const text::AddedToken& token : added) EXPECT_TRUE(token.special) << token.content;

  auto chat_template = text::FindChatTemplate(dir);
  ASSERT_TRUE(chat_template && chat_template->has_value());
  EXPECT_EQ((*chat_template)->path, dir + "/chat_template.jinja");
  EXPECT_EQ(text::MatchChatTemplate((*chat_template)->text), text::ChatTemplateMatch::kBuiltIn);

  auto stops = engine::ReadStopIds(dir, checkpoint.config());
  ASSERT_TRUE(stops) << stops.error().ToString();
  EXPECT_EQ(*stops, (std::vector<int32_t>{151645, 151643}));

  // An engine over it: tokenizer, template check, preprocessor, stop set.
  std::shared_ptr<const model::Model> shared(std::move(*model));
  engine::EngineOptions options;
  options.threads = 2;
  options.kv_cache_bytes = int64_t{32} << 20;
  auto engine = engine::Engine::Create(shared, dir, options);
  ASSERT_TRUE(engine) << engine.error().ToString();
  ASSERT_NE((*engine)->tokenizer(), nullptr);
  EXPECT_EQ((*engine)->default_stop_ids(), (std::vector<int32_t>{151645, 151643}));
  EXPECT_TRUE(CheckProfileTokens(dir, *(*engine)->tokenizer(), pipeline::Profile::kPro));
}

// TV-47: min_pixels comes from the checkpoint. Pro 100x100 -> 224x224 (64 tokens), 28x600 ->
// 56x1064 (76 tokens); the 2509 tiny model's 3136 gives 112x112 (16 tokens).
TEST(ProTinyTest, Tv47MinPixelsFromTheCheckpoint) {
  auto pro = image::ReadImageProcessorConfig(ProTiny());
  auto tiny = image::ReadImageProcessorConfig(Tiny());
  ASSERT_TRUE(pro) << pro.error().ToString();
  ASSERT_TRUE(tiny) << tiny.error().ToString();
  EXPECT_EQ(pro->min_pixels, 50176);
  EXPECT_EQ(pro->max_pixels, 1605632);
  EXPECT_EQ(tiny->min_pixels, 3136);
  auto tokens = [](const image::ImageProcessorConfig& config, int64_t h, int64_t w) {
    auto image = image::MakeImage(w, h, 200, 100, 50);
    EXPECT_TRUE(image) << image.error().ToString();
    auto pixels = image::PreprocessImage(*image, config);
    EXPECT_TRUE(pixels) << pixels.error().ToString();
    if (!pixels) return std::array<int64_t, 3>{-1, -1, -1};
    const image::PatchGrid& g = pixels->grid;
    return std::array<int64_t, 3>{g.h * 14, g.w * 14, g.patches() / 4};
  };
  EXPECT_EQ(tokens(*pro, 100, 100), (std::array<int64_t, 3>{224, 224, 64}));
  EXPECT_EQ(tokens(*tiny, 100, 100), (std::array<int64_t, 3>{112, 112, 16}));
  EXPECT_EQ(tokens(*pro, 28, 600), (std::array<int64_t, 3>{56, 1064, 76}));
}

// ---------------------------------------------------------------------------------------------
// Profiles and their tokens.

TEST(ChooseModelProfileTest, FromTheFiles) {
  auto pro = ChooseModelProfile(ProTiny(), "", std::nullopt);
  ASSERT_TRUE(pro) << pro.error().ToString();
  EXPECT_EQ(pro->profile, pipeline::Profile::kPro);
  EXPECT_EQ(pro->reason, "config.json nests text_config");
  auto tiny = ChooseModelProfile(Tiny(), "", std::nullopt);
  ASSERT_TRUE(tiny) << tiny.error().ToString();
  EXPECT_EQ(tiny->profile, pipeline::Profile::k2509);
  auto named = ChooseModelProfile(Tiny(), "opendatalab/MinerU2.5-Pro-2605-1.2B", std::nullopt);
  ASSERT_TRUE(named);
  EXPECT_EQ(named->profile, pipeline::Profile::kPro);
  EXPECT_EQ(named->reason, "the model name says MinerU2.5-Pro");
  auto forced = ChooseModelProfile(ProTiny(), "", pipeline::Profile::k2509);
  ASSERT_TRUE(forced);
  EXPECT_EQ(forced->profile, pipeline::Profile::k2509);
  EXPECT_EQ(forced->reason, "forced");

  auto evidence = ReadProfileEvidence(ProTiny(), "served-name");
  ASSERT_TRUE(evidence) << evidence.error().ToString();
  EXPECT_TRUE(evidence->nested_text_config);
  EXPECT_EQ(evidence->min_pixels, 50176);
  EXPECT_NE(evidence->model_name.find("served-name"), std::string::npos);
  EXPECT_NE(evidence->model_name.find(ProTiny()), std::string::npos);
}

TEST(ChooseModelProfileTest, MinPixelsAloneSaysPro) {
  const std::string dir = testing::TestDir();
  for (const char* name : {"config.json", "model.safetensors"}) {
    fs::create_symlink(Tiny() + "/" + name, dir + "/" + name);
  }
  Json processor = ReadJson(Tiny() + "/preprocessor_config.json");
  processor["min_pixels"] = 50176;
  WriteFile(dir + "/preprocessor_config.json", processor.dump());
  auto choice = ChooseModelProfile(dir, "", std::nullopt);
  ASSERT_TRUE(choice) << choice.error().ToString();
  EXPECT_EQ(choice->profile, pipeline::Profile::kPro);
  EXPECT_EQ(choice->reason, "preprocessor_config.json min_pixels is 50176");
  // Without preprocessor_config.json: unknown, so 2509.
  fs::remove(dir + "/preprocessor_config.json");
  auto evidence = ReadProfileEvidence(dir, "");
  ASSERT_TRUE(evidence);
  EXPECT_FALSE(evidence->min_pixels.has_value());
  EXPECT_EQ(pipeline::DetectProfile(*evidence).profile, pipeline::Profile::k2509);
}

TEST(ChooseModelProfileTest, BrokenFilesAreErrors) {
  const std::string dir = testing::TestDir();
  EXPECT_FALSE(ChooseModelProfile(dir, "", std::nullopt));  // no config.json
  WriteFile(dir + "/config.json", "{\"model_type\": ");
  auto broken = ChooseModelProfile(dir, "", std::nullopt);
  ASSERT_FALSE(broken);
  EXPECT_NE(broken.error().message.find(dir + "/config.json"), std::string::npos);
  // A forced profile reads nothing.
  EXPECT_TRUE(ChooseModelProfile(dir, "", pipeline::Profile::kPro));
  fs::copy_file(Tiny() + "/config.json", dir + "/c.json");
  fs::rename(dir + "/c.json", dir + "/config.json");
  WriteFile(dir + "/preprocessor_config.json", "{\"min_pixels\": \"many\"}");
  auto processor = ChooseModelProfile(dir, "", std::nullopt);
  ASSERT_FALSE(processor);
  EXPECT_NE(processor.error().message.find("'min_pixels'"), std::string::npos);
  // The byte bound.
  WriteFile(dir + "/preprocessor_config.json", "{}");
  const uint64_t size = fs::file_size(dir + "/config.json");
  EXPECT_TRUE(ReadProfileEvidence(dir, "", size));
  EXPECT_FALSE(ReadProfileEvidence(dir, "", size - 1));
}

TEST(CheckProfileTokensTest, The2509TableLacksProTokens) {
  auto tokenizer = text::Tokenizer::Load(Tiny() + "/tokenizer.json");
  ASSERT_TRUE(tokenizer) << tokenizer.error().ToString();
  EXPECT_TRUE(CheckProfileTokens(Tiny(), **tokenizer, pipeline::Profile::k2509));
  const Status pro = CheckProfileTokens(Tiny(), **tokenizer, pipeline::Profile::kPro);
  ASSERT_FALSE(pro);
  EXPECT_EQ(pro.error().code, ErrorCode::kUnsupported);
  EXPECT_NE(pro.error().message.find("no added token <ched> <|paratext|> (the pro profile needs "
                                     "them)"),
            std::string::npos)
      << pro.error().message;
  EXPECT_NE(pro.error().message.find(Tiny() + "/tokenizer.json"), std::string::npos);

  auto pro_tokenizer = text::Tokenizer::Load(ProTiny() + "/tokenizer.json");
  ASSERT_TRUE(pro_tokenizer);
  EXPECT_TRUE(CheckProfileTokens(ProTiny(), **pro_tokenizer, pipeline::Profile::k2509));
  EXPECT_TRUE(CheckProfileTokens(ProTiny(), **pro_tokenizer, pipeline::Profile::kPro));
  // An added_tokens.json from the other table is caught.
  const std::string dir = testing::TestDir();
  for (const char* name : {"tokenizer.json", "tokenizer_config.json"}) {
    fs::create_symlink(ProTiny() + "/" + name, dir + "/" + name);
  }
  WriteFile(dir + "/added_tokens.json", "{\"<|rotate_right|>\": 151669}");
  const Status mixed = CheckProfileTokens(dir, **pro_tokenizer, pipeline::Profile::kPro);
  ASSERT_FALSE(mixed);
  EXPECT_NE(mixed.error().message.find("<|rotate_right|> has id 151669"), std::string::npos)
      << mixed.error().message;
}

// ---------------------------------------------------------------------------------------------
// inspect

TEST(InspectProfileTest, ProTinyText) {
  const std::string dir = ProTiny();
  const CliResult r = RunCli({"inspect", dir});
  ASSERT_TRUE(Succeeded(r));
  EXPECT_TRUE(Has(r,
                  "profile:      pro: config.json nests text_config (text_config nested, "
                  "min_pixels 50176)\n"))
      << Describe(r);
  EXPECT_TRUE(Has(r, "stop ids:     151645, 151643\n")) << Describe(r);
  EXPECT_TRUE(Has(r, "template:     built-in (" + dir + "/chat_template.jinja)\n")) << Describe(r);
  EXPECT_TRUE(
      Has(r, "tokenizer:    31 added tokens (ids 151643..151673); pro profile tokens: ok\n"))
      << Describe(r);
  EXPECT_TRUE(Has(r, "architecture: qwen2_vl (text fields in text_config)")) << Describe(r);
  EXPECT_TRUE(Has(r, "tied (no lm_head.weight)")) << Describe(r);
  EXPECT_TRUE(r.err.empty()) << Describe(r);

  const CliResult forced = RunCli({"inspect", dir, "--profile", "2509"});
  ASSERT_TRUE(Succeeded(forced));
  EXPECT_TRUE(Has(forced, "profile:      2509: forced (text_config nested, min_pixels 50176)\n"))
      << Describe(forced);
  EXPECT_TRUE(Has(forced, "2509 profile tokens: ok\n")) << Describe(forced);
  EXPECT_TRUE(UsageError(RunCli({"inspect", dir, "--profile", "2604"}), {"--profile"}));
}

TEST(InspectProfileTest, TinyForcedProNamesTheMissingTokens) {
  const CliResult r = RunCli({"inspect", Tiny(), "--profile", "pro"});
  ASSERT_TRUE(Succeeded(r));  // inspect describes; it does not refuse
  EXPECT_TRUE(Has(r, "profile:      pro: forced (text_config absent, min_pixels 3136)\n"))
      << Describe(r);
  EXPECT_TRUE(Has(r, "tokenizer:    29 added tokens (ids 151643..151671); pro profile tokens: "))
      << Describe(r);
  EXPECT_TRUE(Has(r, "no added token <ched> <|paratext|>")) << Describe(r);
  EXPECT_TRUE(Has(r, "template:     built-in (" + Tiny() + "/tokenizer_config.json#chat_template)"))
      << Describe(r);
  const CliResult detected = RunCli({"inspect", Tiny()});
  ASSERT_TRUE(Succeeded(detected));
  EXPECT_TRUE(Has(detected,
                  "profile:      2509: no Pro evidence in the checkpoint (text_config "
                  "absent, min_pixels 3136)\n"))
      << Describe(detected);
}

TEST(InspectProfileTest, ProTinyJson) {
  const CliResult r = RunCli({"inspect", "--json", ProTiny()});
  ASSERT_TRUE(Succeeded(r));
  const Json json = Json::parse(r.out, nullptr, /*allow_exceptions=*/false);
  ASSERT_TRUE(json.is_object()) << Describe(r);
  EXPECT_EQ(json["profile"], Json({{"name", "pro"},
                                   {"reason", "config.json nests text_config"},
                                   {"forced", false},
                                   {"nested_text_config", true},
                                   {"min_pixels", 50176}}));
  EXPECT_EQ(json["stop_ids"], Json::array({151645, 151643}));
  EXPECT_EQ(json["dtype"], "bfloat16");
  EXPECT_EQ(json["config_layout"], "text_config");
  EXPECT_EQ(json["chat_template"]["match"], "built-in");
  EXPECT_EQ(json["tokenizer"]["added_tokens"], 31);
  EXPECT_EQ(json["tokenizer"]["first_added_id"], 151643);
  EXPECT_EQ(json["tokenizer"]["last_added_id"], 151673);
  EXPECT_EQ(json["tokenizer"]["profile_tokens"], "ok");
}

// A chat template this runtime cannot render: inspect says so, the engine refuses.
TEST(InspectProfileTest, ForeignTemplate) {
  const std::string dir = testing::TestDir();
  for (const auto& entry : fs::directory_iterator(ProTiny())) {
    const std::string name = entry.path().filename().string();
    if (name != "chat_template.jinja") fs::create_symlink(entry.path(), dir + "/" + name);
  }
  WriteFile(dir + "/chat_template.jinja", "{% for m in messages %}{{ m.content }}{% endfor %}");
  const CliResult r = RunCli({"inspect", dir});
  ASSERT_TRUE(Succeeded(r));
  EXPECT_TRUE(Has(r, "template:     foreign (" + dir + "/chat_template.jinja)\n")) << Describe(r);
  auto model = model::Model::Load(dir);
  ASSERT_TRUE(model) << model.error().ToString();
  engine::EngineOptions options;
  options.threads = 2;
  options.kv_cache_bytes = int64_t{32} << 20;
  auto engine =
      engine::Engine::Create(std::shared_ptr<const model::Model>(std::move(*model)), dir, options);
  ASSERT_FALSE(engine);
  EXPECT_EQ(engine.error().code, ErrorCode::kUnsupported);
  EXPECT_NE(engine.error().message.find(dir + "/chat_template.jinja"), std::string::npos);
}

}  // namespace
}  // namespace mineru::apps
