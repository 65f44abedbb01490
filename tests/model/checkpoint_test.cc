// SPDX-License-Identifier: Apache-2.0
// Checkpoint::Open and Model::Load on the checkpoint layouts found in the wild (one file or
// shards, classic or prefixed tensor names, tied or untied lm_head) and on broken folders: a
// missing or bad config.json or weight file, a bad index, a wrong or missing tensor. A bad
// checkpoint must come back as an Error (never a crash), with the expected code and a message
// naming the file and the tensor or field at fault. Also the checkpoint fingerprint: stable
// across loads and layouts, changed by any weight byte or config value.
//
// Files go to fresh folders under ::testing::TempDir(). Valid tiny checkpoints come from the
// committed golden model (20 MB) or from WriteRandomCheckpoint with TinyModelConfig() (see
// checkpoint_test_util.h).
#include "model/checkpoint.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "base/dtype.h"
#include "base/json.h"
#include "base/status.h"
#include "base/thread_pool.h"
#include "checkpoint_test_util.h"
#include "devtools/random_checkpoint.h"
#include "model/greedy.h"
#include "model/model.h"
#include "model/safetensors.h"
#include "model/weights.h"

namespace mineru::model {
namespace {

using devtools::TensorNaming;
using devtools::TinyModelConfig;
using devtools::WriteRandomCheckpoint;
namespace fs = std::filesystem;

using testing::EditedGolden;
using testing::ExpectSameOutputs;
using testing::FailsWith;
using testing::FreshDir;
using testing::Greedy;
using testing::Join;
using testing::kGoldenModel;
using testing::kGoldenTensors;
using testing::LinkedCopy;
using testing::Named;
using testing::OwnedTensor;
using testing::Pool;
using testing::RandomSeed1;
using testing::RandomSeed1Sharded;
using testing::ReadBytes;
using testing::ReadJson;
using testing::ReadTensors;
using testing::Replace;
using testing::ShardFiles;
using testing::SharedRandom;
using testing::WriteBytes;
using testing::WriteJsonFile;
using testing::WriteSafetensors;

// ---------------------------------------------------------------------------------------------
// Checkpoint::Open and Model::Load

TEST(CheckpointOpenTest, GoldenCheckpoint) {
  auto checkpoint = Checkpoint::Open(kGoldenModel);
  ASSERT_TRUE(checkpoint) << checkpoint.error().ToString();
  EXPECT_EQ(checkpoint->dir(), kGoldenModel);
  EXPECT_EQ(static_cast<int>(checkpoint->tensors().size()), kGoldenTensors);
  EXPECT_EQ(checkpoint->files(), std::vector<std::string>{Join(kGoldenModel, "model.safetensors")});
  EXPECT_FALSE(checkpoint->Has("lm_head.weight"));
  EXPECT_TRUE(checkpoint->tied_embeddings());
  EXPECT_EQ(checkpoint->config().text.hidden_size, 64);
  EXPECT_EQ(checkpoint->num_bytes(), 2 * static_cast<uint64_t>(checkpoint->num_parameters()));
  for (const auto& [name, tensor] : checkpoint->tensors()) {
    EXPECT_EQ(tensor.info->dtype, DType::kBF16) << name;
  }
  // A few exact shapes of the golden model.
  const int64_t embed[] = {151936, 64};
  EXPECT_TRUE(checkpoint->Matrix("model.embed_tokens.weight", embed));
  const int64_t patch[] = {64, 3, 2, 14, 14};
  auto patch_view = checkpoint->Matrix("visual.patch_embed.proj.weight", patch);
  ASSERT_TRUE(patch_view) << patch_view.error().ToString();
  EXPECT_EQ(patch_view->rows, 64);
  EXPECT_EQ(patch_view->cols, 3 * 2 * 14 * 14);
  EXPECT_TRUE(FailsWith(checkpoint->Vector("model.norm.weight", 63), ErrorCode::kCorrupt,
                        {"model.norm.weight", "[64]", "[63]"}));
  EXPECT_TRUE(FailsWith(checkpoint->Vector("model.nope", 64), ErrorCode::kNotFound,
                        {"model.nope", kGoldenModel}));
}

TEST(CheckpointOpenTest, MissingDirectory) {
  const std::string dir = FreshDir("x") + "/does-not-exist";
  EXPECT_TRUE(FailsWith(Checkpoint::Open(dir), ErrorCode::kNotFound, {dir}));
  EXPECT_TRUE(FailsWith(Model::Load(dir), ErrorCode::kNotFound, {dir}));
  // A file is not a checkpoint directory either.
  const std::string file = Join(kGoldenModel, "config.json");
  EXPECT_TRUE(FailsWith(Checkpoint::Open(file), ErrorCode::kNotFound, {file}));
}

TEST(CheckpointOpenTest, MissingOrBadConfigJson) {
  const std::string dir = FreshDir("ckpt");
  fs::create_symlink(fs::absolute(Join(kGoldenModel, "model.safetensors")),
                     Join(dir, "model.safetensors"));
  const std::string config = Join(dir, "config.json");
  EXPECT_TRUE(FailsWith(Checkpoint::Open(dir), ErrorCode::kNotFound, {config}));

  WriteBytes(config, R"({"model_type": "qwen2_vl", )");
  EXPECT_TRUE(FailsWith(Checkpoint::Open(dir), ErrorCode::kCorrupt, {config, "JSON"}));

  Json json = ReadJson(Join(kGoldenModel, "config.json"));
  json.erase("intermediate_size");
  WriteJsonFile(config, json);
  EXPECT_TRUE(
      FailsWith(Checkpoint::Open(dir), ErrorCode::kCorrupt, {config, "'intermediate_size'"}));
  EXPECT_TRUE(FailsWith(Model::Load(dir), ErrorCode::kCorrupt, {config, "'intermediate_size'"}));

  json = ReadJson(Join(kGoldenModel, "config.json"));
  json["vision_config"].erase("embed_dim");
  WriteJsonFile(config, json);
  EXPECT_TRUE(FailsWith(Checkpoint::Open(dir), ErrorCode::kCorrupt,
                        {config, "vision_config", "'embed_dim'"}));

  // Over the JSON size limit.
  json = ReadJson(Join(kGoldenModel, "config.json"));
  WriteJsonFile(config, json);
  CheckpointLimits limits;
  limits.max_json_bytes = 100;
  EXPECT_TRUE(FailsWith(Checkpoint::Open(dir, limits), ErrorCode::kResourceExhausted, {config}));
  EXPECT_TRUE(Checkpoint::Open(dir));
}

TEST(CheckpointOpenTest, NoWeightFiles) {
  const std::string dir = FreshDir("ckpt");
  fs::copy_file(Join(kGoldenModel, "config.json"), Join(dir, "config.json"));
  EXPECT_TRUE(FailsWith(Checkpoint::Open(dir), ErrorCode::kNotFound,
                        {dir, "model.safetensors", "model.safetensors.index.json"}));
  // A broken model.safetensors is reported with its path.
  WriteBytes(Join(dir, "model.safetensors"), "tiny");
  EXPECT_TRUE(FailsWith(Checkpoint::Open(dir), ErrorCode::kCorrupt,
                        {Join(dir, "model.safetensors"), "too short"}));
  // The header limit applies to checkpoint files.
  fs::remove(Join(dir, "model.safetensors"));
  fs::create_symlink(fs::absolute(Join(kGoldenModel, "model.safetensors")),
                     Join(dir, "model.safetensors"));
  CheckpointLimits limits;
  limits.max_header_bytes = 1000;
  EXPECT_TRUE(FailsWith(Checkpoint::Open(dir, limits), ErrorCode::kResourceExhausted,
                        {Join(dir, "model.safetensors")}));
}

TEST(CheckpointOpenTest, WrongShapeNamesTensorAndFile) {
  // [64, 128] stored as [128, 64]: same bytes, so only the config can tell.
  const std::string dir = EditedGolden("ckpt", [](std::vector<OwnedTensor>& tensors) {
    Named(tensors, "model.layers.1.mlp.down_proj.weight").shape = {128, 64};
  });
  const std::string file = Join(dir, "model.safetensors");
  ASSERT_TRUE(Checkpoint::Open(dir));  // shapes are the config's business, checked on bind
  EXPECT_TRUE(FailsWith(Model::Load(dir), ErrorCode::kCorrupt,
                        {file, "'model.layers.1.mlp.down_proj.weight'", "[128, 64]", "[64, 128]"}));

  // A norm weight stored 2-D.
  const std::string dir2 = EditedGolden("ckpt2", [](std::vector<OwnedTensor>& tensors) {
    Named(tensors, "visual.blocks.0.norm1.bias").shape = {8, 8};
  });
  EXPECT_TRUE(FailsWith(
      Model::Load(dir2), ErrorCode::kCorrupt,
      {Join(dir2, "model.safetensors"), "'visual.blocks.0.norm1.bias'", "[8, 8]", "[64]"}));

  // The patch embedding flattened to 2-D is not the Conv3d shape the config implies.
  const std::string dir3 = EditedGolden("ckpt3", [](std::vector<OwnedTensor>& tensors) {
    Named(tensors, "visual.patch_embed.proj.weight").shape = {64, 1176};
  });
  EXPECT_TRUE(FailsWith(Model::Load(dir3), ErrorCode::kCorrupt,
                        {"'visual.patch_embed.proj.weight'", "[64, 1176]", "[64, 3, 2, 14, 14]"}));
}

TEST(CheckpointOpenTest, NonKernelDTypeIsUnsupported) {
  const std::string dir = EditedGolden("ckpt", [](std::vector<OwnedTensor>& tensors) {
    OwnedTensor& norm = Named(tensors, "model.norm.weight");
    norm.dtype = DType::kI64;
    norm.data.assign(64 * 8, 0);
  });
  const std::string file = Join(dir, "model.safetensors");
  ASSERT_TRUE(Checkpoint::Open(dir));
  EXPECT_TRUE(
      FailsWith(Model::Load(dir), ErrorCode::kUnsupported, {file, "'model.norm.weight'", "I64"}));

  const std::string dir2 = EditedGolden("ckpt2", [](std::vector<OwnedTensor>& tensors) {
    OwnedTensor& q = Named(tensors, "model.layers.0.self_attn.q_proj.weight");
    q.dtype = DType::kF64;
    q.data.assign(64 * 64 * 8, 0);
  });
  EXPECT_TRUE(FailsWith(Model::Load(dir2), ErrorCode::kUnsupported,
                        {"'model.layers.0.self_attn.q_proj.weight'", "F64"}));
}

TEST(CheckpointOpenTest, MissingTensorIsNamed) {
  for (const std::string name :
       {"visual.blocks.1.mlp.fc2.bias", "model.embed_tokens.weight", "model.norm.weight",
        "visual.merger.mlp.2.weight", "model.layers.1.self_attn.k_proj.bias"}) {
    SCOPED_TRACE(name);
    const std::string dir = EditedGolden("ckpt", [&](std::vector<OwnedTensor>& tensors) {
      std::erase_if(tensors, [&](const OwnedTensor& t) { return t.name == name; });
    });
    auto checkpoint = Checkpoint::Open(dir);
    ASSERT_TRUE(checkpoint) << checkpoint.error().ToString();
    EXPECT_EQ(static_cast<int>(checkpoint->tensors().size()), kGoldenTensors - 1);
    EXPECT_TRUE(FailsWith(Model::Load(dir), ErrorCode::kNotFound, {dir, "'" + name + "'"}));
  }
}

// ---------------------------------------------------------------------------------------------
// Sharded checkpoints

TEST(ShardedCheckpointTest, SameWeightsAsOneFile) {
  const std::string single = RandomSeed1();
  auto one = Model::Load(single);
  ASSERT_TRUE(one) << one.error().ToString();
  EXPECT_FALSE(fs::exists(Join(single, "model.safetensors.index.json")));
  const Checkpoint& a = (*one)->checkpoint();
  EXPECT_EQ(static_cast<int>(a.tensors().size()), kGoldenTensors);

  for (const uint64_t shard_bytes : {uint64_t{4} << 20, uint64_t{128} << 10}) {
    for (const TensorNaming naming : {TensorNaming::kClassic, TensorNaming::kPrefixed}) {
      SCOPED_TRACE(std::to_string(shard_bytes) +
                   (naming == TensorNaming::kClassic ? " classic" : " prefixed"));
      const std::string dir = FreshDir("sharded");
      const Status written =
          WriteRandomCheckpoint(Pool(), TinyModelConfig(), dir,
                                {.seed = 1, .naming = naming, .max_shard_bytes = shard_bytes});
      ASSERT_TRUE(written) << written.error().ToString();
      EXPECT_FALSE(fs::exists(Join(dir, "model.safetensors")));
      ASSERT_TRUE(fs::exists(Join(dir, "model.safetensors.index.json")));
      const std::vector<std::string> shards = ShardFiles(dir);
      ASSERT_GE(shards.size(), 2u);
      for (size_t i = 0; i < shards.size(); ++i) {
        EXPECT_EQ(shards[i],
                  fmt::format("model-{:05d}-of-{:05d}.safetensors", i + 1, shards.size()));
      }
      // Every shard but one holding a single bigger tensor stays within the limit.
      for (const std::string& shard : shards) {
        auto file = SafetensorsFile::Open(Join(dir, shard));
        ASSERT_TRUE(file) << file.error().ToString();
        uint64_t bytes = 0;
        for (const TensorInfo& info : file->tensors()) bytes += info.bytes;
        if (file->tensors().size() > 1) {
          EXPECT_LE(bytes, shard_bytes) << shard;
        }
      }

      auto many = Model::Load(dir);
      ASSERT_TRUE(many) << many.error().ToString();
      const Checkpoint& b = (*many)->checkpoint();
      EXPECT_EQ(b.files().size(), shards.size());
      // The fingerprint covers config and tensors, not how they are split or named in files.
      EXPECT_EQ((*many)->fingerprint(), (*one)->fingerprint());
      EXPECT_EQ(b.tensors().size(), a.tensors().size());
      EXPECT_EQ(b.num_parameters(), a.num_parameters());
      EXPECT_EQ(b.num_bytes(), a.num_bytes());
      for (const auto& [name, tensor] : a.tensors()) {
        SCOPED_TRACE(name);
        const auto it = b.tensors().find(name);
        ASSERT_NE(it, b.tensors().end());
        const auto x = tensor.file->Data(*tensor.info);
        const auto y = it->second.file->Data(*it->second.info);
        ASSERT_EQ(x.size(), y.size());
        EXPECT_EQ(std::memcmp(x.data(), y.data(), x.size()), 0);
      }
    }
  }
}

// Sharded checkpoints with one file replaced; the shards themselves are symlinks to a shared
// valid checkpoint.
class BadIndexTest : public ::testing::Test {
 protected:
  void SetUp() override {
    source_ = RandomSeed1Sharded();
    shards_ = ShardFiles(source_);
    ASSERT_GE(shards_.size(), 3u);
    index_ = ReadJson(Join(source_, "model.safetensors.index.json"));
    ASSERT_TRUE(index_["weight_map"].is_object());
  }

  // A copy whose index is `index`; returns the folder.
  std::string WithIndex(const Json& index) {
    const std::string dir = LinkedCopy(source_, "ckpt");
    Replace(Join(dir, "model.safetensors.index.json"), index.dump(2));
    return dir;
  }
  std::string IndexPath(const std::string& dir) {
    return Join(dir, "model.safetensors.index.json");
  }

  std::string source_;
  std::vector<std::string> shards_;
  Json index_;
};

TEST_F(BadIndexTest, ValidIndexLoads) {
  auto model = Model::Load(source_);
  ASSERT_TRUE(model) << model.error().ToString();
  EXPECT_EQ(model->get()->checkpoint().files().size(), shards_.size());
}

TEST_F(BadIndexTest, WeightMapMissingOrNotAnObject) {
  Json index = index_;
  index.erase("weight_map");
  std::string dir = WithIndex(index);
  EXPECT_TRUE(
      FailsWith(Checkpoint::Open(dir), ErrorCode::kCorrupt, {IndexPath(dir), "weight_map"}));
  index["weight_map"] = Json::array({shards_[0]});
  dir = WithIndex(index);
  EXPECT_TRUE(
      FailsWith(Checkpoint::Open(dir), ErrorCode::kCorrupt, {IndexPath(dir), "weight_map"}));
  dir = WithIndex(Json::array({index_}));
  EXPECT_TRUE(
      FailsWith(Checkpoint::Open(dir), ErrorCode::kCorrupt, {IndexPath(dir), "weight_map"}));
  dir = LinkedCopy(source_, "ckpt");
  Replace(IndexPath(dir), R"({"weight_map": {"a": )");
  EXPECT_TRUE(FailsWith(Checkpoint::Open(dir), ErrorCode::kCorrupt, {IndexPath(dir), "JSON"}));
}

TEST_F(BadIndexTest, ShardNamesMustBePlainFileNames) {
  const std::string tensor = "model.norm.weight";
  const std::string holder = index_["weight_map"][tensor].get<std::string>();
  for (const std::string& bad :
       std::vector<std::string>{"../" + holder, "./" + holder, "sub/" + holder, "..", ".", "",
                                "/etc/passwd", "..\\" + holder}) {
    SCOPED_TRACE(bad);
    Json index = index_;
    index["weight_map"][tensor] = bad;
    const std::string dir = WithIndex(index);
    // Make the escape target real, so only the name check can stop it.
    std::error_code ec;
    fs::create_symlink(fs::absolute(Join(source_, holder)), fs::path(dir).parent_path() / holder,
                       ec);
    EXPECT_TRUE(FailsWith(Checkpoint::Open(dir), ErrorCode::kCorrupt,
                          {IndexPath(dir), "'" + tensor + "'", "invalid file name"}));
  }
  Json index = index_;
  index["weight_map"][tensor] = 3;
  const std::string dir = WithIndex(index);
  EXPECT_TRUE(FailsWith(Checkpoint::Open(dir), ErrorCode::kCorrupt,
                        {IndexPath(dir), "'" + tensor + "'", "invalid file name"}));
}

TEST_F(BadIndexTest, TensorNotInItsShard) {
  // Point a tensor at a shard that exists but does not hold it.
  const std::string tensor = "visual.merger.mlp.2.bias";
  const std::string holder = index_["weight_map"][tensor].get<std::string>();
  const std::string other = holder == shards_[0] ? shards_[1] : shards_[0];
  Json index = index_;
  index["weight_map"][tensor] = other;
  std::string dir = WithIndex(index);
  EXPECT_TRUE(FailsWith(Checkpoint::Open(dir), ErrorCode::kCorrupt,
                        {Join(dir, other), "'" + tensor + "'", "model.safetensors.index.json"}));
  // A tensor no shard holds.
  index = index_;
  index["weight_map"]["visual.extra.weight"] = shards_[0];
  dir = WithIndex(index);
  EXPECT_TRUE(FailsWith(Checkpoint::Open(dir), ErrorCode::kCorrupt,
                        {Join(dir, shards_[0]), "'visual.extra.weight'"}));
  // A shard file that is not there.
  index = index_;
  index["weight_map"][tensor] = "model-00099-of-00099.safetensors";
  dir = WithIndex(index);
  EXPECT_TRUE(FailsWith(Checkpoint::Open(dir), ErrorCode::kNotFound,
                        {Join(dir, "model-00099-of-00099.safetensors")}));
}

TEST_F(BadIndexTest, UnindexedTensorIsMissing) {
  // The index is authoritative: a tensor stored in a shard but not listed is not loaded.
  Json index = index_;
  index["weight_map"].erase("model.layers.0.mlp.up_proj.weight");
  const std::string dir = WithIndex(index);
  auto checkpoint = Checkpoint::Open(dir);
  ASSERT_TRUE(checkpoint) << checkpoint.error().ToString();
  EXPECT_FALSE(checkpoint->Has("model.layers.0.mlp.up_proj.weight"));
  EXPECT_TRUE(
      FailsWith(Model::Load(dir), ErrorCode::kNotFound, {"'model.layers.0.mlp.up_proj.weight'"}));
}

TEST_F(BadIndexTest, ShardCountLimitBoundary) {
  const int n = static_cast<int>(shards_.size());
  CheckpointLimits limits;
  limits.max_shards = n;
  auto at_limit = Checkpoint::Open(source_, limits);
  ASSERT_TRUE(at_limit) << at_limit.error().ToString();
  EXPECT_EQ(static_cast<int>(at_limit->files().size()), n);
  limits.max_shards = n - 1;
  EXPECT_TRUE(FailsWith(
      Checkpoint::Open(source_, limits), ErrorCode::kResourceExhausted,
      {IndexPath(source_), std::to_string(n) + " shards", "limit of " + std::to_string(n - 1)}));
  // The JSON size limit applies to the index too.
  limits = {};
  limits.max_json_bytes = 2000;
  EXPECT_TRUE(FailsWith(Checkpoint::Open(source_, limits), ErrorCode::kResourceExhausted,
                        {IndexPath(source_)}));
}

TEST_F(BadIndexTest, SingleFileWinsOverIndex) {
  // Like transformers: with both present, model.safetensors is used and the index ignored.
  const std::string dir = WithIndex(Json::array());
  fs::create_symlink(fs::absolute(Join(kGoldenModel, "model.safetensors")),
                     Join(dir, "model.safetensors"));
  auto checkpoint = Checkpoint::Open(dir);
  ASSERT_TRUE(checkpoint) << checkpoint.error().ToString();
  EXPECT_EQ(checkpoint->files(), std::vector<std::string>{Join(dir, "model.safetensors")});
}

// ---------------------------------------------------------------------------------------------
// Tensor naming

TEST(TensorNamingTest, PrefixedNamesLoadLikeClassic) {
  const std::string classic = RandomSeed1();
  const std::string prefixed = SharedRandom("seed1-prefixed", TinyModelConfig(),
                                            {.seed = 1, .naming = TensorNaming::kPrefixed});
  // The file really holds the transformers >= 4.52 names.
  auto file = SafetensorsFile::Open(Join(prefixed, "model.safetensors"));
  ASSERT_TRUE(file) << file.error().ToString();
  std::vector<std::string> names;
  for (const TensorInfo& info : file->tensors()) names.push_back(info.name);
  for (const char* name :
       {"model.visual.patch_embed.proj.weight", "model.language_model.embed_tokens.weight",
        "model.language_model.layers.1.mlp.down_proj.weight", "model.language_model.norm.weight",
        "model.visual.merger.ln_q.bias"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << name;
  }
  EXPECT_EQ(std::find(names.begin(), names.end(), "model.embed_tokens.weight"), names.end());

  auto a = Model::Load(classic);
  auto b = Model::Load(prefixed);
  ASSERT_TRUE(a) << a.error().ToString();
  ASSERT_TRUE(b) << b.error().ToString();
  EXPECT_EQ((*a)->fingerprint(), (*b)->fingerprint());
  std::vector<std::string> canonical_a, canonical_b;
  for (const auto& [name, tensor] : (*a)->checkpoint().tensors()) canonical_a.push_back(name);
  for (const auto& [name, tensor] : (*b)->checkpoint().tensors()) canonical_b.push_back(name);
  EXPECT_EQ(canonical_a, canonical_b);
  EXPECT_EQ((*b)->checkpoint().tensors().at("model.norm.weight").info->name,
            "model.language_model.norm.weight");
  ExpectSameOutputs(Greedy(**a, 2), Greedy(**b, 2));
}

TEST(TensorNamingTest, CanonicalNames) {
  EXPECT_EQ(CanonicalTensorName("model.visual.blocks.0.attn.qkv.weight"),
            "visual.blocks.0.attn.qkv.weight");
  EXPECT_EQ(CanonicalTensorName("model.language_model.layers.3.mlp.up_proj.weight"),
            "model.layers.3.mlp.up_proj.weight");
  EXPECT_EQ(CanonicalTensorName("visual.merger.ln_q.weight"), "visual.merger.ln_q.weight");
  EXPECT_EQ(CanonicalTensorName("model.norm.weight"), "model.norm.weight");
  EXPECT_EQ(CanonicalTensorName("lm_head.weight"), "lm_head.weight");
  EXPECT_EQ(CanonicalTensorName("model.visual"), "model.visual");
}

TEST(TensorNamingTest, SameTensorUnderBothNamesIsCorrupt) {
  // Only Checkpoint::Open matters here: a few tensors beside the golden config are enough.
  const std::vector<OwnedTensor> golden = ReadTensors(Join(kGoldenModel, "model.safetensors"));
  auto copy = [&](const std::string& name, const std::string& stored_as) {
    for (const OwnedTensor& t : golden) {
      if (t.name == name) return OwnedTensor{stored_as, t.dtype, t.shape, t.data};
    }
    ADD_FAILURE() << name;
    return OwnedTensor{};
  };
  for (const auto& [classic, prefixed] : std::vector<std::pair<std::string, std::string>>{
           {"visual.merger.ln_q.bias", "model.visual.merger.ln_q.bias"},
           {"model.norm.weight", "model.language_model.norm.weight"}}) {
    SCOPED_TRACE(classic);
    const std::string dir = FreshDir("ckpt");
    fs::copy_file(Join(kGoldenModel, "config.json"), Join(dir, "config.json"));
    WriteSafetensors(Join(dir, "model.safetensors"),
                     {copy("visual.blocks.0.norm1.bias", "visual.blocks.0.norm1.bias"),
                      copy(classic, classic), copy(classic, prefixed)});
    EXPECT_TRUE(FailsWith(Checkpoint::Open(dir), ErrorCode::kCorrupt,
                          {"'" + classic + "'", "stored twice", "'" + prefixed + "'",
                           Join(dir, "model.safetensors")}));
  }
  // Across two shards of an index.
  const std::string dir = FreshDir("sharded");
  fs::copy_file(Join(kGoldenModel, "config.json"), Join(dir, "config.json"));
  WriteSafetensors(Join(dir, "a.safetensors"), {copy("model.norm.weight", "model.norm.weight")});
  WriteSafetensors(Join(dir, "b.safetensors"),
                   {copy("model.norm.weight", "model.language_model.norm.weight")});
  WriteJsonFile(Join(dir, "model.safetensors.index.json"),
                {{"weight_map",
                  {{"model.norm.weight", "a.safetensors"},
                   {"model.language_model.norm.weight", "b.safetensors"}}}});
  EXPECT_TRUE(FailsWith(Checkpoint::Open(dir), ErrorCode::kCorrupt,
                        {"'model.norm.weight'", "stored twice", Join(dir, "a.safetensors"),
                         Join(dir, "b.safetensors")}));
}

// ---------------------------------------------------------------------------------------------
// lm_head

TEST(LmHeadTest, NoLmHeadMeansTiedWhateverTheConfigSays) {
  const std::string dir = LinkedCopy(RandomSeed1(), "ckpt");
  Json config = TinyModelConfig();
  config["tie_word_embeddings"] = false;
  Replace(Join(dir, "config.json"), config.dump(2));
  auto model = Model::Load(dir);
  ASSERT_TRUE(model) << model.error().ToString();
  const Checkpoint& checkpoint = (*model)->checkpoint();
  EXPECT_FALSE(checkpoint.config().tie_word_embeddings);
  EXPECT_FALSE(checkpoint.Has("lm_head.weight"));
  EXPECT_TRUE(checkpoint.tied_embeddings());
  const DecoderWeights& w = (*model)->weights().decoder;
  EXPECT_EQ(w.lm_head.data, w.embed_tokens.data);
  EXPECT_EQ(w.lm_head.rows, 151936);
  EXPECT_EQ(w.lm_head.cols, 64);
}

TEST(LmHeadTest, UntiedUsesLmHeadWeight) {
  Json config = TinyModelConfig();
  config["tie_word_embeddings"] = false;
  const std::string dir = SharedRandom("seed1-untied", config, {.seed = 1});
  auto model = Model::Load(dir);
  ASSERT_TRUE(model) << model.error().ToString();
  const Checkpoint& checkpoint = (*model)->checkpoint();
  ASSERT_TRUE(checkpoint.Has("lm_head.weight"));
  EXPECT_FALSE(checkpoint.tied_embeddings());
  EXPECT_EQ(static_cast<int>(checkpoint.tensors().size()), kGoldenTensors + 1);
  const DecoderWeights& w = (*model)->weights().decoder;
  EXPECT_NE(w.lm_head.data, w.embed_tokens.data);
  const CheckpointTensor& head = checkpoint.tensors().at("lm_head.weight");
  EXPECT_EQ(w.lm_head.data, head.file->Data(*head.info).data());
  EXPECT_EQ(w.lm_head.rows, 151936);
  EXPECT_EQ(w.lm_head.cols, 64);

  // The same files with tie_word_embeddings true: lm_head.weight is stored but unused.
  const std::string tied = LinkedCopy(dir, "tied");
  config["tie_word_embeddings"] = true;
  Replace(Join(tied, "config.json"), config.dump(2));
  auto tied_model = Model::Load(tied);
  ASSERT_TRUE(tied_model) << tied_model.error().ToString();
  EXPECT_TRUE((*tied_model)->checkpoint().tied_embeddings());
  EXPECT_EQ((*tied_model)->weights().decoder.lm_head.data,
            (*tied_model)->weights().decoder.embed_tokens.data);
}

TEST(LmHeadTest, UntiedLmHeadOfWrongShape) {
  Json config = TinyModelConfig();
  config["tie_word_embeddings"] = false;
  const std::string source = SharedRandom("seed1-untied", config, {.seed = 1});
  const std::string dir = FreshDir("ckpt");
  fs::copy_file(Join(source, "config.json"), Join(dir, "config.json"));
  std::vector<OwnedTensor> tensors = ReadTensors(Join(source, "model.safetensors"));
  Named(tensors, "lm_head.weight").shape = {64, 151936};
  WriteSafetensors(Join(dir, "model.safetensors"), tensors);
  EXPECT_TRUE(FailsWith(
      Model::Load(dir), ErrorCode::kCorrupt,
      {Join(dir, "model.safetensors"), "'lm_head.weight'", "[64, 151936]", "[151936, 64]"}));
}

// ---------------------------------------------------------------------------------------------
// Fingerprint

TEST(FingerprintTest, StableAcrossLoads) {
  auto a = Checkpoint::Open(kGoldenModel);
  auto b = Model::Load(kGoldenModel);
  ASSERT_TRUE(a) << a.error().ToString();
  ASSERT_TRUE(b) << b.error().ToString();
  EXPECT_EQ(a->fingerprint().size(), 64u);
  EXPECT_EQ(a->fingerprint().find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_EQ(a->fingerprint(), (*b)->fingerprint());
  // A copy elsewhere has the same fingerprint: the path is not part of it.
  const std::string copy = LinkedCopy(kGoldenModel, "copy");
  auto c = Checkpoint::Open(copy);
  ASSERT_TRUE(c) << c.error().ToString();
  EXPECT_EQ(c->fingerprint(), a->fingerprint());
  // So is config.json written in another layout (keys sorted, whitespace dropped).
  Replace(Join(copy, "config.json"), ReadJson(Join(kGoldenModel, "config.json")).dump());
  auto d = Checkpoint::Open(copy);
  ASSERT_TRUE(d) << d.error().ToString();
  EXPECT_EQ(d->fingerprint(), a->fingerprint());
}

TEST(FingerprintTest, ChangesWithOneWeightByte) {
  auto original = Checkpoint::Open(kGoldenModel);
  ASSERT_TRUE(original) << original.error().ToString();
  const std::string bytes = ReadBytes(Join(kGoldenModel, "model.safetensors"));
  // A big tensor (sampled in windows) and a small one (hashed whole).
  for (const std::string name : {"model.embed_tokens.weight", "visual.blocks.0.norm1.bias",
                                 "model.layers.1.mlp.down_proj.weight"}) {
    SCOPED_TRACE(name);
    const CheckpointTensor& tensor = original->tensors().at(name);
    const uint64_t at = tensor.info->offset + std::min<uint64_t>(tensor.info->bytes - 1, 1001);
    ASSERT_LT(at - tensor.info->offset, 4096u);
    const std::string dir = LinkedCopy(kGoldenModel, "flipped");
    std::string flipped = bytes;
    flipped[at] = static_cast<char>(flipped[at] ^ 0x01);
    Replace(Join(dir, "model.safetensors"), flipped);
    auto changed = Checkpoint::Open(dir);
    ASSERT_TRUE(changed) << changed.error().ToString();
    EXPECT_NE(changed->fingerprint(), original->fingerprint());
  }
}

TEST(FingerprintTest, ChangesWithConfigValue) {
  auto original = Checkpoint::Open(kGoldenModel);
  ASSERT_TRUE(original) << original.error().ToString();
  Json config = ReadJson(Join(kGoldenModel, "config.json"));
  for (const auto& [key, value] :
       std::vector<std::pair<std::string, Json>>{{"max_position_embeddings", 16384},
                                                 {"rms_norm_eps", 1e-5},
                                                 {"eos_token_id", Json::array({151645, 151643})}}) {
    SCOPED_TRACE(key);
    Json edited = config;
    edited[key] = value;
    const std::string dir = LinkedCopy(kGoldenModel, "config");
    Replace(Join(dir, "config.json"), edited.dump(2));
    auto changed = Checkpoint::Open(dir);
    ASSERT_TRUE(changed) << changed.error().ToString();
    EXPECT_NE(changed->fingerprint(), original->fingerprint());
  }
}

TEST(FingerprintTest, RandomCheckpointsBySeed) {
  const std::string seed1 = RandomSeed1();
  const std::string seed2 = SharedRandom("seed2", TinyModelConfig(), {.seed = 2});
  auto a = Checkpoint::Open(seed1);
  auto b = Checkpoint::Open(seed2);
  ASSERT_TRUE(a) << a.error().ToString();
  ASSERT_TRUE(b) << b.error().ToString();
  EXPECT_NE(a->fingerprint(), b->fingerprint());
  auto golden = Checkpoint::Open(kGoldenModel);
  ASSERT_TRUE(golden);
  EXPECT_NE(a->fingerprint(), golden->fingerprint());

  // The same seed gives the same bytes whatever the thread count.
  const std::string again = FreshDir("seed1-one-thread");
  ThreadPool one_thread(1);
  const Status written = WriteRandomCheckpoint(one_thread, TinyModelConfig(), again, {.seed = 1});
  ASSERT_TRUE(written) << written.error().ToString();
  EXPECT_TRUE(ReadBytes(Join(again, "model.safetensors")) ==
              ReadBytes(Join(seed1, "model.safetensors")));
  auto c = Checkpoint::Open(again);
  ASSERT_TRUE(c) << c.error().ToString();
  EXPECT_EQ(c->fingerprint(), a->fingerprint());
}

}  // namespace
}  // namespace mineru::model
