// SPDX-License-Identifier: Apache-2.0
// Loading tokenizer.json: every malformed or unsupported file is refused with a clear error,
// and every limit holds at its boundary.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "text_test_util.h"

namespace mineru::text {
namespace {

using testing::Fixture;
using testing::FixtureJson;
using testing::kFixturePath;

struct BadFile {
  std::string name;
  std::function<void(Json&)> edit;
  ErrorCode code;
  std::string needle;  // must appear in the message
};

std::string WriteTemp(const std::string& name, const std::string& bytes) {
  const std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

TEST(TokenizerFilesTest, BadFilesAreRefusedWithClearErrors) {
  const std::vector<BadFile> cases = {
      {"root array", [](Json& j) { j = Json::array(); }, ErrorCode::kCorrupt, "JSON object"},
      {"no model", [](Json& j) { j.erase("model"); }, ErrorCode::kCorrupt, "'model'"},
      {"model type", [](Json& j) { j["model"]["type"] = "WordPiece"; }, ErrorCode::kUnsupported,
       "WordPiece"},
      {"untyped model without merges",
       [](Json& j) {
         j["model"].erase("type");
         j["model"].erase("merges");
       },
       ErrorCode::kUnsupported, "only BPE"},
      {"merge of an unknown token",
       [](Json& j) {
         j["model"]["merges"][3] = {"i", "nope"};
       },
       ErrorCode::kCorrupt, "merges[3] names \"nope\""},
      {"merge result not in vocab",
       [](Json& j) {
         j["model"]["merges"][0] = {"x", "q"};
       },
       ErrorCode::kCorrupt, "\"xq\""},
      {"merge without a space", [](Json& j) { j["model"]["merges"][2] = "abc"; },
       ErrorCode::kCorrupt, "merges[2]"},
      {"merge of numbers",
       [](Json& j) {
         j["model"]["merges"][1] = {1, 2};
       },
       ErrorCode::kCorrupt, "merges[1]"},
      {"vocab not an object", [](Json& j) { j["model"]["vocab"] = Json::array(); },
       ErrorCode::kCorrupt, "'vocab'"},
      {"negative id", [](Json& j) { j["model"]["vocab"]["xyz"] = -3; }, ErrorCode::kCorrupt, "xyz"},
      {"string id", [](Json& j) { j["model"]["vocab"]["xyz"] = "7"; }, ErrorCode::kCorrupt, "xyz"},
      {"duplicate vocab ids", [](Json& j) { j["model"]["vocab"]["xyz"] = 266; },
       ErrorCode::kCorrupt, "id 266 to both"},
      {"duplicate added ids", [](Json& j) { j["added_tokens"][4]["id"] = 275; },
       ErrorCode::kCorrupt, "also added token"},
      {"added id of a vocab token", [](Json& j) { j["added_tokens"][0]["id"] = 65; },
       ErrorCode::kCorrupt, "already the vocab's"},
      {"added vocab token under another id", [](Json& j) { j["added_tokens"][9]["id"] = 281; },
       ErrorCode::kCorrupt, "the vocab gives it id 270"},
      {"added token listed twice",
       [](Json& j) {
         Json again = j["added_tokens"][0];
         again["id"] = 281;
         j["added_tokens"].push_back(again);
       },
       ErrorCode::kCorrupt, "listed twice"},
      {"empty added token", [](Json& j) { j["added_tokens"][1]["content"] = ""; },
       ErrorCode::kCorrupt, "added_tokens[1]"},
      {"added token without id", [](Json& j) { j["added_tokens"][2].erase("id"); },
       ErrorCode::kCorrupt, "added_tokens[2]"},
      {"flag of the wrong type", [](Json& j) { j["added_tokens"][3]["lstrip"] = "yes"; },
       ErrorCode::kCorrupt, "lstrip"},
      {"added_tokens not an array", [](Json& j) { j["added_tokens"] = Json::object(); },
       ErrorCode::kCorrupt, "added_tokens"},
      {"normalizer",
       [](Json& j) {
         j["normalizer"] = {{"type", "Lowercase"}};
       },
       ErrorCode::kUnsupported, "Lowercase"},
      {"normalizer in a sequence",
       [](Json& j) {
         j["normalizer"] = Json::parse(
             R"({"type": "Sequence", "normalizers": [{"type": "NFC"}, {"type": "NFKC"}]})");
       },
       ErrorCode::kUnsupported, "NFKC"},
      {"no pre-tokenizer", [](Json& j) { j["pre_tokenizer"] = nullptr; }, ErrorCode::kUnsupported,
       "pre_tokenizer"},
      {"pre-tokenizer",
       [](Json& j) {
         j["pre_tokenizer"] = {{"type", "Whitespace"}};
       },
       ErrorCode::kUnsupported, "Whitespace"},
      {"split behavior",
       [](Json& j) { j["pre_tokenizer"]["pretokenizers"][0]["behavior"] = "Removed"; },
       ErrorCode::kUnsupported, "Removed"},
      {"split invert", [](Json& j) { j["pre_tokenizer"]["pretokenizers"][0]["invert"] = true; },
       ErrorCode::kUnsupported, "invert"},
      {"prefix space",
       [](Json& j) { j["pre_tokenizer"]["pretokenizers"][1]["add_prefix_space"] = true; },
       ErrorCode::kUnsupported, "add_prefix_space"},
      {"no ByteLevel", [](Json& j) { j["pre_tokenizer"]["pretokenizers"].erase(1); },
       ErrorCode::kUnsupported, "ByteLevel"},
      {"ByteLevel not last",
       [](Json& j) {
         Json& list = j["pre_tokenizer"]["pretokenizers"];
         list.push_back(list[0]);
       },
       ErrorCode::kUnsupported, "follow the ByteLevel"},
      {"bad regex",
       [](Json& j) { j["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"] = "(\\p{L}"; },
       ErrorCode::kCorrupt, "bad regex"},
      {"no decoder", [](Json& j) { j["decoder"] = nullptr; }, ErrorCode::kUnsupported, "decoder"},
      {"decoder",
       [](Json& j) {
         j["decoder"] = {{"type", "WordPiece"}};
       },
       ErrorCode::kUnsupported, "WordPiece"},
      {"version", [](Json& j) { j["version"] = "2.0"; }, ErrorCode::kUnsupported, "2.0"},
      {"dropout", [](Json& j) { j["model"]["dropout"] = 0.1; }, ErrorCode::kUnsupported, "dropout"},
      {"byte fallback", [](Json& j) { j["model"]["byte_fallback"] = true; },
       ErrorCode::kUnsupported, "byte_fallback"},
      {"subword prefix", [](Json& j) { j["model"]["continuing_subword_prefix"] = "##"; },
       ErrorCode::kUnsupported, "continuing_subword_prefix"},
      {"unknown unk_token", [](Json& j) { j["model"]["unk_token"] = "<unk>"; }, ErrorCode::kCorrupt,
       "<unk>"},
      {"sparse ids", [](Json& j) { j["added_tokens"][0]["id"] = 100000; }, ErrorCode::kCorrupt,
       "sparse"},
  };
  for (const BadFile& c : cases) {
    Json json = FixtureJson();
    c.edit(json);
    auto tokenizer = Tokenizer::FromJson(json, "bad.json");
    ASSERT_FALSE(tokenizer) << c.name << ": loaded";
    EXPECT_EQ(tokenizer.error().code, c.code) << c.name << ": " << tokenizer.error().ToString();
    EXPECT_NE(tokenizer.error().message.find(c.needle), std::string::npos)
        << c.name << ": " << tokenizer.error().ToString();
    EXPECT_EQ(tokenizer.error().message.rfind("bad.json", 0), 0u) << c.name;
    // Load streams the vocab and merges out of the tree (Tokenizer::Load): the same refusal.
    const std::string path = WriteTemp("bad.json", json.dump());
    auto loaded = Tokenizer::Load(path);
    ASSERT_FALSE(loaded) << c.name << ": loaded from the file";
    EXPECT_EQ(loaded.error().code, c.code) << c.name << ": " << loaded.error().ToString();
    EXPECT_NE(loaded.error().message.find(c.needle), std::string::npos)
        << c.name << ": " << loaded.error().ToString();
  }
}

// A vocab member repeated in the text (a tree keeps only the last) takes its last id, read
// from the file or from a tree; a repeated vocab object is refused.
TEST(TokenizerFilesTest, RepeatedVocabMembersTakeTheLastId) {
  const Json json = FixtureJson();
  std::string text = json.dump();
  const std::string vocab = json["model"]["vocab"].dump();
  const size_t at = text.find(vocab);
  ASSERT_NE(at, std::string::npos);
  // "xyz" first under id 5 (a duplicate of another token's), then under a fresh id.
  text.replace(at, vocab.size(),
               "{\"xyz\":5," + vocab.substr(1, vocab.size() - 2) + ",\"xyz\":281}");
  auto parsed = ParseJson(text, "t", JsonFileLimits());
  ASSERT_TRUE(parsed) << parsed.error().ToString();
  auto from_tree = Tokenizer::FromJson(*parsed, "t");
  auto from_file = Tokenizer::Load(WriteTemp("repeated.json", text));
  ASSERT_TRUE(from_tree) << from_tree.error().ToString();
  ASSERT_TRUE(from_file) << from_file.error().ToString();
  for (const Tokenizer* t : {from_tree->get(), from_file->get()}) {
    const int32_t id = 281;
    auto text_of = t->Decode(std::span(&id, 1));
    ASSERT_TRUE(text_of) << text_of.error().ToString();
    EXPECT_EQ(*text_of, "xyz");
  }
  std::string twice = json.dump();
  const size_t model = twice.find("\"model\":{");
  ASSERT_NE(model, std::string::npos);
  twice.insert(model + 9, "\"vocab\":{},");
  auto refused = Tokenizer::Load(WriteTemp("twice.json", twice));
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, ErrorCode::kCorrupt);
  EXPECT_NE(refused.error().message.find("'model.vocab' appears twice"), std::string::npos)
      << refused.error().ToString();
}

TEST(TokenizerFilesTest, FileErrorsNameTheFile) {
  const std::string not_json = WriteTemp("not_json.json", "{\"model\": ");
  auto t = Tokenizer::Load(not_json);
  ASSERT_FALSE(t);
  EXPECT_EQ(t.error().code, ErrorCode::kCorrupt);
  EXPECT_NE(t.error().message.find(not_json), std::string::npos);
  EXPECT_NE(t.error().message.find("invalid JSON"), std::string::npos);
  auto missing = Tokenizer::Load(::testing::TempDir() + "/missing/tokenizer.json");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, ErrorCode::kNotFound);
  // Invalid UTF-8 inside a JSON string is a JSON error.
  auto bad_utf8 = Tokenizer::Load(WriteTemp("bad_utf8.json", "{\"version\": \"\xFF\"}"));
  ASSERT_FALSE(bad_utf8);
  EXPECT_EQ(bad_utf8.error().code, ErrorCode::kCorrupt);
}

TEST(TokenizerLimitsTest, FileBytes) {
  const uint64_t size = std::filesystem::file_size(kFixturePath);
  TokenizerLimits limits;
  limits.max_file_bytes = size;
  EXPECT_TRUE(Tokenizer::Load(kFixturePath, limits));
  limits.max_file_bytes = size - 1;
  auto t = Tokenizer::Load(kFixturePath, limits);
  ASSERT_FALSE(t);
  EXPECT_EQ(t.error().code, ErrorCode::kResourceExhausted);
  EXPECT_NE(t.error().message.find(std::to_string(size - 1)), std::string::npos);
}

TEST(TokenizerLimitsTest, JsonDepth) {
  TokenizerLimits limits;
  int smallest = 0;
  for (int depth = 1; depth <= 16 && smallest == 0; ++depth) {
    limits.max_json_depth = depth;
    if (Tokenizer::Load(kFixturePath, limits)) smallest = depth;
  }
  ASSERT_GT(smallest, 1);
  limits.max_json_depth = smallest - 1;
  auto t = Tokenizer::Load(kFixturePath, limits);
  ASSERT_FALSE(t);
  EXPECT_EQ(t.error().code, ErrorCode::kResourceExhausted);
  EXPECT_NE(t.error().message.find("nested"), std::string::npos);
}

TEST(TokenizerLimitsTest, EncodeBytes) {
  TokenizerLimits limits;
  limits.max_encode_bytes = 10;
  const auto t = testing::Load(FixtureJson(), limits);
  ASSERT_NE(t, nullptr);
  EXPECT_TRUE(t->Encode("0123456789"));
  EXPECT_TRUE(t->Encode("\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9"));  // bytes, not characters
  auto over = t->Encode("0123456789a");
  ASSERT_FALSE(over);
  EXPECT_EQ(over.error().code, ErrorCode::kResourceExhausted);
  EXPECT_NE(over.error().message.find("11 bytes"), std::string::npos);
  EXPECT_NE(over.error().message.find("10 bytes"), std::string::npos);
}

TEST(TokenizerLimitsTest, DecodeIds) {
  TokenizerLimits limits;
  limits.max_decode_ids = 3;
  const auto t = testing::Load(FixtureJson(), limits);
  ASSERT_NE(t, nullptr);
  EXPECT_TRUE(t->Decode(std::vector<int32_t>{'a', 'b', 'c'}));
  auto over = t->Decode(std::vector<int32_t>{'a', 'b', 'c', 'd'});
  ASSERT_FALSE(over);
  EXPECT_EQ(over.error().code, ErrorCode::kResourceExhausted);
  EXPECT_NE(over.error().message.find("limit of 3"), std::string::npos);
}

// One tokenizer, many threads (the BPE cache is shared): every thread gets the same ids.
TEST(TokenizerFilesTest, ConcurrentEncodeAgrees) {
  const auto t = testing::Load(FixtureJson());
  ASSERT_NE(t, nullptr);
  std::vector<std::string> texts;
  for (int i = 0; i < 200; ++i) texts.push_back("the thing " + std::to_string(i * 7919) + " abc");
  std::vector<std::vector<int32_t>> expected;
  for (const std::string& text : texts) expected.push_back(*Fixture().Encode(text));
  std::vector<int> mismatches(4, 0);
  std::vector<std::thread> threads;
  for (int k = 0; k < 4; ++k) {
    threads.emplace_back([&, k] {
      for (int round = 0; round < 20; ++round) {
        for (size_t i = 0; i < texts.size(); ++i) {
          auto ids = t->Encode(texts[(i + k * 31) % texts.size()]);
          if (!ids || *ids != expected[(i + k * 31) % texts.size()]) ++mismatches[k];
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(mismatches, (std::vector<int>{0, 0, 0, 0}));
}

}  // namespace
}  // namespace mineru::text
