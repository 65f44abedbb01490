// SPDX-License-Identifier: Apache-2.0
// mineru-cpp parse PATH... -o OUT: PDFs and images (files or directories, recursively) through
// MinerU's two-step pipeline to MinerU's output files, OUT/<stem>/vlm/ (pipeline/document.h).
//
// Progress goes to stderr: one self-updating line on a terminal, plain lines otherwise. The
// exit code is 0 when every document and page was parsed, 1 when any failed (each failure is
// named on stderr and in <stem>_report.json), 2 for a bad command line.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <mutex>

#include "apps/commands.h"
#include "apps/engine_flags.h"
#include "apps/model_options.h"
#include "apps/model_server_flags.h"
#include "apps/model_source.h"
#include "apps/pipeline_backend.h"
#include "apps/profile_flags.h"
#include "base/process_memory.h"
#include "engine/engine.h"
#include "pipeline/document.h"

namespace mineru::apps {
namespace {

namespace fs = std::filesystem;

struct ParseArgs {
  std::vector<std::string> paths;
  std::string output;
  std::string model = "opendatalab/MinerU2.5-2509-1.2B";
  std::optional<int> start_page, end_page;
  bool formula = true;
  bool table = true;
  bool json = false;
  int pages_in_flight = pipeline::kDefaultPagesInFlight;
  std::optional<int64_t> max_tokens;
  ModelLoadOptions load;
  EngineFlags engine_flags;
  ProfileFlags profile_flags;
  ModelServerFlags model_server;
};

// The documents a path names: a file as is; a directory, recursively, every file with a PDF or
// image suffix (MinerU's list), sorted.
std::vector<std::string> Inputs(const std::string& path, std::vector<std::string>* missing) {
  std::error_code ec;
  if (fs::is_regular_file(path, ec)) return {path};
  if (!fs::is_directory(path, ec)) {
    missing->push_back(path);
    return {};
  }
  static const std::vector<std::string> kSuffixes = {".pdf", ".png", ".jpg", ".jpeg", ".webp",
                                                     ".gif", ".bmp", ".tif", ".tiff"};
  std::vector<std::string> out;
  for (auto it = fs::recursive_directory_iterator(path, ec); !ec && it != fs::end(it);
       it.increment(ec)) {
    if (!it->is_regular_file(ec)) continue;
    std::string suffix = it->path().extension().string();
    std::transform(suffix.begin(), suffix.end(), suffix.begin(), ::tolower);
    if (std::find(kSuffixes.begin(), kSuffixes.end(), suffix) != kSuffixes.end()) {
      out.push_back(it->path().string());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

int RunParse(const ParseArgs& args, const GlobalOptions& global) {
  std::vector<std::string> inputs, missing;
  for (const std::string& path : args.paths) {
    for (std::string& input : Inputs(path, &missing)) inputs.push_back(std::move(input));
  }
  for (const std::string& path : missing) {
    std::fprintf(stderr, "mineru-cpp: error: %s: no such file or directory\n", path.c_str());
  }
  if (!missing.empty()) return kExitFailure;
  if (inputs.empty()) {
    std::fprintf(stderr, "mineru-cpp: error: no PDF or image files found\n");
    return kExitFailure;
  }
  const int threads = ResolveThreads(global);
  auto backend = StartPipelineBackend(args.model, args.load, args.engine_flags, threads, "parse",
                                      args.profile_flags, args.model_server);
  if (!backend) return ReportError(backend.error());
  pipeline::Generator& generator = backend->generator();
  pipeline::DocumentOptions options;
  backend->Apply(args.profile_flags, options);
  options.extract.formula = args.formula;
  options.extract.table = args.table;
  options.start_page = args.start_page;
  options.end_page = args.end_page;
  options.pages_in_flight = args.pages_in_flight;
  options.extract.max_new_tokens = args.max_tokens;

  const bool terminal = isatty(STDERR_FILENO) == 1;
  const auto start = std::chrono::steady_clock::now();
  int failed_documents = 0, failed_pages = 0, pages = 0;
  int64_t failed_blocks = 0, tokens = 0;
  double render = 0, assemble = 0;
  pipeline::ExtractTimings extract;
  Json summary = Json::array();
  for (size_t d = 0; d < inputs.size(); ++d) {
    const std::string& input = inputs[d];
    const auto doc_start = std::chrono::steady_clock::now();
    auto progress = [&](const pipeline::DocumentProgress& p) {
      const double seconds = Seconds(doc_start);
      if (terminal) {
        std::fprintf(stderr, "\r[%zu/%zu] %s: page %d/%d, %lld blocks, %.0f tokens/s   ", d + 1,
                     inputs.size(), fs::path(input).filename().c_str(), p.pages_done, p.pages_total,
                     static_cast<long long>(p.blocks_done),
                     seconds > 0 ? static_cast<double>(p.generated_tokens) / seconds : 0.0);
      } else {
        std::fprintf(stderr, "%s: page %d/%d done, %lld blocks (%.1f s)\n", input.c_str(),
                     p.pages_done, p.pages_total, static_cast<long long>(p.blocks_done), seconds);
      }
    };
    auto result = pipeline::ParseDocument(generator, input, args.output, options, progress);
    if (terminal) std::fprintf(stderr, "\n");
    Json entry{{"input", input}};
    if (!result) {
      ++failed_documents;
      std::fprintf(stderr, "mineru-cpp: error: %s\n", result.error().ToString().c_str());
      entry["error"] = result.error().ToString();
      summary.push_back(entry);
      continue;
    }
    pages += result->pages;
    failed_pages += static_cast<int>(result->failed_pages.size());
    failed_blocks += result->failed_blocks;
    tokens += result->generated_tokens;
    render += result->render_seconds;
    assemble += result->assemble_seconds;
    extract += result->extract;
    for (const pipeline::PageFailure& f : result->failed_pages) {
      std::fprintf(stderr, "mineru-cpp: error: %s: page %d: %s\n", input.c_str(), f.page_idx + 1,
                   f.error.c_str());
    }
    for (const std::string& w : result->warnings) {
      std::fprintf(stderr, "mineru-cpp: warning: %s: %s\n", input.c_str(), w.c_str());
    }
    entry["output"] = result->output_dir;
    entry["pages"] = result->pages;
    entry["failed_pages"] = result->failed_pages.size();
    entry["failed_blocks"] = result->failed_blocks;
    entry["seconds"] = Seconds(doc_start);
    entry["timings"] = {{"render", result->render_seconds},
                        {"layout_wall", result->extract.layout_wall},
                        {"blocks_wall", result->extract.blocks_wall},
                        {"post_process", result->extract.post_process},
                        {"assemble", result->assemble_seconds},
                        {"requests", result->extract.requests},
                        {"request_queued", result->extract.queued},
                        {"request_vision", result->extract.vision},
                        {"request_prefill", result->extract.prefill},
                        {"request_decode", result->extract.decode}};
    summary.push_back(entry);
  }
  const double seconds = Seconds(start);
  std::fprintf(stderr,
               "parsed %zu document(s), %d page(s) in %.1f s (%.3f pages/s, %lld tokens); "
               "failed: %d document(s), %d page(s), %lld block(s)\n",
               inputs.size() - static_cast<size_t>(failed_documents), pages, seconds,
               seconds > 0 ? pages / seconds : 0.0, static_cast<long long>(tokens),
               failed_documents, failed_pages, static_cast<long long>(failed_blocks));
  // Where the time went. Page steps are summed over pages (pages overlap when several are in
  // flight); request figures are the engine's own timings summed over requests.
  std::fprintf(stderr,
               "time: render %.2f s; per page (summed): layout %.2f s, blocks %.2f s, "
               "post-processing %.3f s, crops and outputs %.2f s; engine (request-seconds): "
               "queued %.2f, vision %.2f, prefill %.2f, decode %.2f\n",
               render, extract.layout_wall, extract.blocks_wall, extract.post_process, assemble,
               extract.queued, extract.vision, extract.prefill, extract.decode);
  Json model_server;
  if (backend->remote) {
    // Per request, in milliseconds: the body built on the page thread (crop to PNG, JSON), the
    // HTTP attempts (connect to last byte: the server's work and the network), the answer read.
    const pipeline::RemoteGeneratorStats s = backend->remote->Stats();
    const double n = s.requests > 0 ? static_cast<double>(s.requests) : 1.0;
    std::fprintf(stderr,
                 "model server: %lld request(s), %lld retried attempt(s), %lld failed, %lld "
                 "truncated; per request: encode %.2f ms, HTTP %.2f ms, answer %.3f ms\n",
                 static_cast<long long>(s.requests), static_cast<long long>(s.retries),
                 static_cast<long long>(s.failed), static_cast<long long>(s.truncated),
                 1e3 * s.encode_seconds / n, 1e3 * s.transfer_seconds / n,
                 1e3 * s.decode_seconds / n);
    model_server = {{"requests", s.requests},
                    {"attempts", s.attempts},
                    {"retries", s.retries},
                    {"succeeded", s.succeeded},
                    {"truncated", s.truncated},
                    {"failed", s.failed},
                    {"encode_seconds", s.encode_seconds},
                    {"transfer_seconds", s.transfer_seconds},
                    {"decode_seconds", s.decode_seconds},
                    {"seconds", s.seconds}};
  }
  const std::optional<int64_t> peak = PeakRssBytes();
  if (peak) {
    std::fprintf(stderr, "peak resident memory: %.0f MB\n", static_cast<double>(*peak) / 1e6);
  }
  if (args.json) {
    Json report{{"documents", summary},
                {"pages", pages},
                {"failed_documents", failed_documents},
                {"failed_pages", failed_pages},
                {"failed_blocks", failed_blocks},
                {"generated_tokens", tokens},
                {"seconds", seconds},
                {"peak_rss_bytes", peak.value_or(-1)}};
    if (!model_server.is_null()) report["model_server"] = model_server;
    std::printf("%s\n", report.dump(2, ' ', false, Json::error_handler_t::replace).c_str());
  }
  return failed_documents > 0 || failed_pages > 0 ? kExitFailure : 0;
}

}  // namespace

void AddParseCommand(CLI::App& app, const GlobalOptions& global, int* exit_code) {
  auto* cmd = app.add_subcommand("parse", "PDFs and images to MinerU's Markdown and JSON files");
  auto args = std::make_shared<ParseArgs>();
  cmd->add_option("paths", args->paths, "PDF or image files, or directories (recursive)")
      ->required();
  cmd->add_option("-o,--output", args->output, "Output directory (OUT/<stem>/vlm/)")->required();
  cmd->add_option("-m,--model", args->model,
                  "Checkpoint directory, or a Hugging Face id found in the local Hugging Face "
                  "cache")
      ->capture_default_str();
  cmd->add_option("-s,--start", args->start_page, "First page, 0-based (MinerU's -s)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("-e,--end", args->end_page, "Last page, 0-based, inclusive (MinerU's -e)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_flag("--formula,!--no-formula", args->formula, "Recognise formulas (default on)");
  cmd->add_flag("--table,!--no-table", args->table, "Recognise tables (default on)");
  cmd->add_option("--pages-in-flight", args->pages_in_flight,
                  "Pages of a document extracted at once (bounds memory)")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  cmd->add_option("--max-tokens", args->max_tokens,
                  "New tokens per model request at most (default: the remaining context)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 24));
  cmd->add_flag("--json", args->json, "Print a JSON summary of every document on stdout");
  args->profile_flags.Register(*cmd);
  args->load.Register(*cmd);
  args->engine_flags.Register(*cmd);
  args->model_server.Register(*cmd);
  cmd->callback([=, &global] { *exit_code = RunParse(*args, global); });
}

}  // namespace mineru::apps
