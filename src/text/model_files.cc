// SPDX-License-Identifier: Apache-2.0
#include "text/model_files.h"

#include <array>
#include <vector>

#include "text/chat_template.h"
#include "text/tokenizer.h"

namespace mineru::text {
namespace {

constexpr std::array<std::string_view, 14> kQwen2VlSpecial = {
    "<|endoftext|>",      "<|im_start|>",     "<|im_end|>",     "<|object_ref_start|>",
    "<|object_ref_end|>", "<|box_start|>",    "<|box_end|>",    "<|quad_start|>",
    "<|quad_end|>",       "<|vision_start|>", "<|vision_end|>", "<|vision_pad|>",
    "<|image_pad|>",      "<|video_pad|>"};

constexpr std::array<std::string_view, 15> kMineru = {
    "<|ref_start|>",   "<|ref_end|>",  "<|rotate_up|>", "<|rotate_right|>", "<|rotate_down|>",
    "<|rotate_left|>", "<|md_start|>", "<|md_end|>",    "<|txt_contd|>",    "<fcel>",
    "<ecel>",          "<lcel>",       "<ucel>",        "<xcel>",           "<nl>"};

constexpr std::array<std::string_view, 17> kPro = {
    "<|ref_start|>", "<|ref_end|>",   "<|md_start|>",    "<|md_end|>",      "<ched>",
    "<ecel>",        "<fcel>",        "<lcel>",          "<ucel>",          "<xcel>",
    "<nl>",          "<|rotate_up|>", "<|rotate_down|>", "<|rotate_left|>", "<|rotate_right|>",
    "<|txt_contd|>", "<|paratext|>"};

// A JSON value dumped with two-space indentation and then indented by `depth` more levels, so
// that hand-assembled and library-dumped parts line up.
template <class J>
std::string Indented(const J& value, int depth) {
  std::string text = value.dump(2);
  std::string out;
  const std::string pad(static_cast<size_t>(depth) * 2, ' ');
  for (char c : text) {
    out += c;
    if (c == '\n') out += pad;
  }
  return out;
}

Json SectionOrNull(const Json& source, std::string_view key) {
  const auto it = source.find(key);
  return it == source.end() ? Json() : *it;
}

Json AddedTokenFields(std::string_view content) {
  // The field order transformers writes in added_tokens_decoder (alphabetical).
  return Json{{"content", content}, {"lstrip", false},      {"normalized", false},
              {"rstrip", false},    {"single_word", false}, {"special", true}};
}

}  // namespace

std::span<const std::string_view> Qwen2VlSpecialTokens() { return kQwen2VlSpecial; }
std::span<const std::string_view> MineruAddedTokens() { return kMineru; }
std::span<const std::string_view> ProAddedTokens() { return kPro; }

Result<ModelTokenizerFiles> BuildModelTokenizerFiles(const Json& source,
                                                     std::string_view source_name,
                                                     TokenTable table) {
  const std::span<const std::string_view> own = table == TokenTable::kPro
                                                    ? std::span<const std::string_view>(kPro)
                                                    : std::span<const std::string_view>(kMineru);
  // Validates the source the way the runtime will read it.
  MINERU_RETURN_IF_ERROR(Tokenizer::FromJson(source, source_name));
  const Json& model = source.at("model");
  const Json& vocab = model.at("vocab");
  std::vector<const std::string*> by_id(vocab.size(), nullptr);
  for (const auto& [token, id] : vocab.items()) {
    const int64_t i = id.get<int64_t>();
    if (i >= static_cast<int64_t>(by_id.size())) {
      return Fail(ErrorCode::kInvalidArgument,
                  "{}: the vocabulary's ids must be 0..{} (found id {} for \"{}\")", source_name,
                  by_id.size() - 1, i, token);
    }
    by_id[static_cast<size_t>(i)] = &token;
  }
  const int64_t first_added = static_cast<int64_t>(by_id.size());

  std::vector<std::string_view> added(kQwen2VlSpecial.begin(), kQwen2VlSpecial.end());
  added.insert(added.end(), own.begin(), own.end());
  nlohmann::ordered_json added_tokens = nlohmann::ordered_json::array();
  Json added_decoder = Json::object();
  Json added_ids = Json::object();  // added_tokens.json (keys sorted, as transformers writes it)
  for (size_t i = 0; i < added.size(); ++i) {
    const int64_t id = first_added + static_cast<int64_t>(i);
    if (vocab.contains(added[i])) {
      return Fail(ErrorCode::kInvalidArgument, "{}: the vocabulary already holds \"{}\"",
                  source_name, added[i]);
    }
    // The field order Hugging Face tokenizers writes.
    added_tokens.push_back(nlohmann::ordered_json{{"id", id},
                                                  {"content", added[i]},
                                                  {"single_word", false},
                                                  {"lstrip", false},
                                                  {"rstrip", false},
                                                  {"normalized", false},
                                                  {"special", true}});
    added_decoder[std::to_string(id)] = AddedTokenFields(added[i]);
    added_ids[std::string(added[i])] = id;
  }

  // tokenizer.json, in the key order Hugging Face tokenizers writes (vocab by id), assembled by
  // hand: 151k vocabulary entries through an order-keeping JSON object would be quadratic.
  std::string out;
  out.reserve(12 << 20);
  out += "{\n  \"version\": \"1.0\",\n  \"truncation\": null,\n  \"padding\": null,\n";
  out += "  \"added_tokens\": " + Indented(added_tokens, 1) + ",\n";
  for (std::string_view key : {"normalizer", "pre_tokenizer", "post_processor", "decoder"}) {
    out += fmt::format("  \"{}\": {},\n", key, Indented(SectionOrNull(source, key), 1));
  }
  out += "  \"model\": {\n    \"type\": \"BPE\",\n    \"dropout\": null,\n";
  out += "    \"unk_token\": null,\n    \"continuing_subword_prefix\": \"\",\n";
  out += "    \"end_of_word_suffix\": \"\",\n    \"fuse_unk\": false,\n";
  out += "    \"byte_fallback\": false,\n    \"ignore_merges\": false,\n    \"vocab\": {";
  for (size_t id = 0; id < by_id.size(); ++id) {
    out += id == 0 ? "\n      " : ",\n      ";
    out += Json(*by_id[id]).dump() + ": " + std::to_string(id);
  }
  out += "\n    },\n    \"merges\": [";
  const Json& merges = model.at("merges");
  for (size_t rank = 0; rank < merges.size(); ++rank) {
    const Json& merge = merges[rank];
    Json pair = merge;
    if (merge.is_string()) {
      const std::string& line = merge.get_ref<const std::string&>();
      const size_t space = line.find(' ');
      pair = Json::array({line.substr(0, space), line.substr(space + 1)});
    }
    out += rank == 0 ? "\n      " : ",\n      ";
    out += pair.dump();
  }
  out += "\n    ]\n  }\n}\n";

  std::vector<std::string_view> additional(kQwen2VlSpecial.begin() + 1, kQwen2VlSpecial.end());
  additional.insert(additional.end(), own.begin(), own.end());
  Json config{{"add_bos_token", false},
              {"add_prefix_space", false},
              {"added_tokens_decoder", added_decoder},
              {"additional_special_tokens", additional},
              {"bos_token", nullptr},
              {"chat_template", kQwen2VlChatTemplate},
              {"clean_up_tokenization_spaces", false},
              {"eos_token", "<|im_end|>"},
              {"errors", "replace"},
              {"model_max_length", 32768},
              {"pad_token", "<|endoftext|>"},
              {"split_special_tokens", false},
              {"tokenizer_class", "Qwen2Tokenizer"},
              {"unk_token", nullptr}};
  ModelTokenizerFiles files{std::move(out), {}, {}, {}, {}};
  if (table == TokenTable::kPro) {
    // transformers >= 4.47 saves the template as chat_template.jinja, no longer inside
    // tokenizer_config.json.
    config.erase("chat_template");
    files.chat_template_jinja = std::string(kQwen2VlChatTemplate);
    auto role = [](std::string_view content) {
      return Json{{"content", content},
                  {"lstrip", false},
                  {"normalized", false},
                  {"rstrip", false},
                  {"single_word", false}};
    };
    const Json map{{"additional_special_tokens", additional},
                   {"eos_token", role("<|im_end|>")},
                   {"pad_token", role("<|endoftext|>")}};
    files.special_tokens_map_json = map.dump(2) + "\n";
    files.added_tokens_json = added_ids.dump(2) + "\n";
  }
  files.tokenizer_config_json = config.dump(2) + "\n";
  return files;
}

}  // namespace mineru::text
