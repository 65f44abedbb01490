// SPDX-License-Identifier: Apache-2.0
// mineru-cpp tokenize: text to token ids and back, one JSON Lines record at a time.
//
//   echo '"\nText Recognition:"' | mineru-cpp tokenize --model DIR        -> [198,1178,47598,25]
//   echo '[198,1178,47598,25]' | mineru-cpp tokenize --model DIR --decode -> "\nText Recognition:"
//
// Encoding adds no special tokens; special tokens written in the text are recognised unless
// --split-special. Decoding keeps special tokens unless --skip-special.
#include <algorithm>
#include <cstdio>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "apps/commands.h"
#include "base/json.h"
#include "text/tokenizer.h"

namespace mineru::apps {
namespace {

struct TokenizeArgs {
  std::string tokenizer;
  std::string model;
  std::string input = "-";
  std::string output = "-";
  bool decode = false;
  bool split_special = false;
  bool skip_special = false;
  text::TokenizerLimits limits;
};

// Lines are read with a cap so that one huge line cannot exhaust memory: no JSON spelling of a
// text within --max-encode-bytes needs more than 6 bytes per text byte (\u00XX), and an id with
// its separator needs at most 16; 64 more allow for surrounding whitespace.
uint64_t MaxLineBytes(const TokenizeArgs& args) {
  const uint64_t count = args.decode ? args.limits.max_decode_ids : args.limits.max_encode_bytes;
  const uint64_t per_item = args.decode ? 16 : 6;
  constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
  return count > (kMax - 64) / per_item ? kMax : count * per_item + 64;
}

// Reads one line (without its '\n') into *line. Returns false at end of input; an error when the
// line is longer than max_bytes.
Result<bool> ReadLine(std::FILE* in, uint64_t max_bytes, int64_t number, std::string* line) {
  line->clear();
  for (;;) {
    const int c = std::getc(in);
    if (c == EOF) {
      if (std::ferror(in)) return Fail(ErrorCode::kIo, "reading the input failed");
      return !line->empty();
    }
    if (c == '\n') return true;
    if (line->size() >= max_bytes) {
      return Fail(ErrorCode::kResourceExhausted,
                  "line {}: longer than {} bytes (the limit follows from --max-encode-bytes / "
                  "--max-decode-ids)",
                  number, max_bytes);
    }
    line->push_back(static_cast<char>(c));
  }
}

Result<std::string> ProcessLine(const text::Tokenizer& tokenizer, const TokenizeArgs& args,
                                const std::string& line, int64_t number) {
  const std::string where = fmt::format("line {}", number);
  // A --decode line holds up to --max-decode-ids ids and its array.
  JsonLimits json_limits = JsonFileLimits(args.limits.max_json_depth);
  json_limits.max_values =
      std::max<uint64_t>(json_limits.max_values, args.limits.max_decode_ids + 1);
  MINERU_ASSIGN_OR_RETURN(Json value, ParseJson(line, where, json_limits));
  if (!args.decode) {
    if (!value.is_string()) {
      return Fail(ErrorCode::kInvalidArgument, "{}: expected a JSON string, got {}", where,
                  value.dump().substr(0, 40));
    }
    auto ids = tokenizer.Encode(value.get_ref<const std::string&>(), !args.split_special);
    if (!ids) return tl::unexpected(WithContext(ids.error(), where));
    return Json(*ids).dump();
  }
  if (!value.is_array()) {
    return Fail(ErrorCode::kInvalidArgument, "{}: expected a JSON array of token ids", where);
  }
  if (value.size() > args.limits.max_decode_ids) {
    return Fail(ErrorCode::kResourceExhausted, "{}: {} ids are over the decode limit of {} ids",
                where, value.size(), args.limits.max_decode_ids);
  }
  std::vector<int32_t> ids;
  ids.reserve(value.size());
  for (const Json& id : value) {
    if (!id.is_number_integer() || id.get<int64_t>() < 0 ||
        id.get<int64_t>() > std::numeric_limits<int32_t>::max()) {
      return Fail(ErrorCode::kInvalidArgument, "{}: {} is not a token id", where, id.dump());
    }
    ids.push_back(static_cast<int32_t>(id.get<int64_t>()));
  }
  auto text = tokenizer.Decode(ids, args.skip_special);
  if (!text) return tl::unexpected(WithContext(text.error(), where));
  return Json(*text).dump();
}

struct FileCloser {
  void operator()(std::FILE* f) const {
    if (f != stdin && f != stdout) std::fclose(f);
  }
};

int RunTokenize(const TokenizeArgs& args) {
  if (args.tokenizer.empty() == args.model.empty()) {
    std::fprintf(stderr, "mineru-cpp: tokenize needs --tokenizer FILE or --model DIR\n");
    return kExitUsage;
  }
  const std::string path = args.tokenizer.empty() ? args.model + "/tokenizer.json" : args.tokenizer;
  auto tokenizer = text::Tokenizer::Load(path, args.limits);
  if (!tokenizer) return ReportError(tokenizer.error());

  std::unique_ptr<std::FILE, FileCloser> in(
      args.input == "-" ? stdin : std::fopen(args.input.c_str(), "rb"));
  if (!in) return ReportError(Error{ErrorCode::kNotFound, args.input + ": cannot open"});
  std::unique_ptr<std::FILE, FileCloser> out(
      args.output == "-" ? stdout : std::fopen(args.output.c_str(), "wb"));
  if (!out) return ReportError(Error{ErrorCode::kIo, args.output + ": cannot create"});

  std::string line;
  for (int64_t number = 1;; ++number) {
    auto more = ReadLine(in.get(), MaxLineBytes(args), number, &line);
    if (!more) return ReportError(more.error());
    if (!*more) break;
    auto result = ProcessLine(**tokenizer, args, line, number);
    if (!result) return ReportError(result.error());
    result->push_back('\n');
    std::fwrite(result->data(), 1, result->size(), out.get());
  }
  if (std::fflush(out.get()) != 0 || std::ferror(out.get())) {
    return ReportError(Error{ErrorCode::kIo, "writing " + args.output + " failed"});
  }
  return 0;
}

}  // namespace

void AddTokenizeCommand(CLI::App& app, const GlobalOptions& global, int* exit_code) {
  auto* cmd = app.add_subcommand(
      "tokenize",
      "Token ids of JSON Lines text (one JSON string per line -> one JSON array of ids per "
      "line), or the text of ids with --decode");
  auto args = std::make_shared<TokenizeArgs>();
  auto* file = cmd->add_option("--tokenizer", args->tokenizer, "A tokenizer.json");
  cmd->add_option("--model", args->model, "A model directory holding tokenizer.json")
      ->excludes(file);
  cmd->add_option("--input", args->input, "JSON Lines input file ('-': stdin)")
      ->capture_default_str();
  cmd->add_option("--output", args->output, "Output file ('-': stdout)")->capture_default_str();
  cmd->add_flag("--decode", args->decode, "Ids to text: each line a JSON array of ids");
  cmd->add_flag("--split-special", args->split_special,
                "Encode special tokens written in the text as ordinary text");
  cmd->add_flag("--skip-special", args->skip_special, "Leave special tokens out when decoding");
  cmd->add_option("--max-tokenizer-bytes", args->limits.max_file_bytes,
                  "Largest tokenizer.json accepted")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--max-json-depth", args->limits.max_json_depth,
                  "Deepest JSON nesting accepted in tokenizer.json and in each line")
      ->check(CLI::Range(1, 1 << 20))
      ->capture_default_str();
  cmd->add_option("--max-encode-bytes", args->limits.max_encode_bytes,
                  "Largest text (UTF-8 bytes) encoded at once")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--max-decode-ids", args->limits.max_decode_ids, "Most ids decoded at once")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->callback([=] { *exit_code = RunTokenize(*args); });
}

}  // namespace mineru::apps
