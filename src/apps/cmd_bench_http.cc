// SPDX-License-Identifier: Apache-2.0
// mineru-cpp bench-http --url http://HOST:PORT: load on a running server from keep-alive
// clients, one thread and one connection each, for every client count of --clients:
//   chat   POST /v1/chat/completions, MinerU-style (one image as a data URL and the
//          "\nText Recognition:" prompt, greedy, --max-tokens), non-streaming;
//   parse  POST /v1/document/parse (multipart, one `file` part), then GET /v1/tasks/{id}
//          every --poll-ms until the task is completed (failed or cancelled count as errors);
//   file_parse  MinerU's POST /file_parse (multipart, one `files` part), which answers when
//          the document is parsed: the latency a MinerU client sees, without polling.
// Prints one row per client count: requests, errors, requests/s, latency percentiles (P50,
// P90, P99 by nearest rank over the successful requests) and the maximum; for chat also
// generated tokens per second (usage.completion_tokens over the wall time). Exit 1 when any
// request failed (the first failure is printed), 2 for a bad command line.
//
// The client is service/http_client.h, a few POSIX socket calls rather than an HTTP library:
// requests need JSON and multipart bodies (so wrk and ab do not fit), and a load generator should
// add as little of its own cost as it can.
#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "apps/commands.h"
#include "base/json.h"
#include "image/data_url.h"
#include "image/encode.h"
#include "service/http_client.h"

namespace mineru::apps {
namespace {

constexpr int kDefaultRequests = 10;
constexpr int kDefaultMaxTokens = 16;
constexpr int kDefaultPollMs = 100;
constexpr int kDefaultTimeoutSeconds = 600;  // MinerU's client gives up after 600 s too
// Largest response accepted; a bigger one is reported as an error rather than buffered.
constexpr size_t kMaxResponseBytes = size_t{256} << 20;

struct BenchHttpArgs {
  std::string url = "http://127.0.0.1:8000";
  std::vector<int> clients = {1, 10, 50};
  int requests = kDefaultRequests;
  std::string kind = "chat";
  std::string image;  // empty: a generated 112x84 PNG
  std::string path;   // the path for get (e.g. /v1/tasks/<id>)
  std::string file;   // the document for parse
  std::string model;  // "model" of chat requests; empty: not sent (the server's own)
  int max_tokens = kDefaultMaxTokens;
  int poll_ms = kDefaultPollMs;
  int timeout_s = kDefaultTimeoutSeconds;
  bool unique = false;  // every request different (no cache hits)
};

// Numbers the --unique documents: a random start per run, so that no two runs (whose results
// a shared cache may keep) send the same bytes.
uint64_t NextUnique() {
  static std::atomic<uint64_t> next{std::random_device{}() * uint64_t{1000003}};
  return next++;
}

struct Target {
  std::string host;
  std::string port;
};

// http://HOST[:PORT][/]; IPv6 as [::1].
Result<Target> ParseUrl(std::string_view url) {
  constexpr std::string_view kScheme = "http://";
  if (url.substr(0, kScheme.size()) != kScheme) {
    return Fail(ErrorCode::kInvalidArgument, "--url must start with http:// (not '{}')", url);
  }
  std::string_view rest = url.substr(kScheme.size());
  rest = rest.substr(0, rest.find('/'));
  Target t;
  if (!rest.empty() && rest.front() == '[') {
    const size_t close = rest.find(']');
    if (close == std::string_view::npos) return Fail(ErrorCode::kInvalidArgument, "bad --url");
    t.host = std::string(rest.substr(1, close - 1));
    rest = rest.substr(close + 1);
    t.port = rest.empty() ? "80" : std::string(rest.substr(rest.front() == ':' ? 1 : 0));
  } else {
    const size_t colon = rest.rfind(':');
    t.host = std::string(rest.substr(0, colon));
    t.port = colon == std::string_view::npos ? "80" : std::string(rest.substr(colon + 1));
  }
  if (t.host.empty() || t.port.empty()) {
    return Fail(ErrorCode::kInvalidArgument, "--url '{}' names no host or port", url);
  }
  return t;
}

using Connection = service::HttpClientConnection;

Result<std::string> ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Fail(ErrorCode::kIo, "{}: cannot open", path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// The chat request body, built once: MinerU's OCR prompt on one image.
Result<Json> ChatBody(const BenchHttpArgs& args) {
  std::string mime = "image/png";
  std::vector<uint8_t> bytes;
  if (args.image.empty()) {
    image::RgbImage rgb;
    rgb.width = 112;
    rgb.height = 84;
    rgb.pixels.resize(static_cast<size_t>(rgb.width * rgb.height * 3));
    for (size_t i = 0; i < rgb.pixels.size(); ++i) rgb.pixels[i] = static_cast<uint8_t>(i * 37);
    MINERU_ASSIGN_OR_RETURN(bytes, image::EncodePng(rgb));
  } else {
    MINERU_ASSIGN_OR_RETURN(std::string file, ReadWholeFile(args.image));
    bytes.assign(file.begin(), file.end());
    if (file.size() >= 3 && static_cast<uint8_t>(file[0]) == 0xFF &&
        static_cast<uint8_t>(file[1]) == 0xD8) {
      mime = "image/jpeg";
    }
  }
  Json body{{"messages",
             {{{"role", "system"}, {"content", "You are a helpful assistant."}},
              {{"role", "user"},
               {"content",
                {{{"type", "image_url"}, {"image_url", {{"url", image::MakeDataUrl(mime, bytes)}}}},
                 {{"type", "text"}, {"text", "\nText Recognition:"}}}}}}},
            {"temperature", 0.0},
            {"top_p", 0.01},
            {"top_k", 1},
            {"skip_special_tokens", false},
            {"max_tokens", args.max_tokens}};
  if (!args.model.empty()) body["model"] = args.model;
  return body;
}

// The chat body to send: as built, or with --unique a prompt ending in a number of its own, so
// that no answer cache on the server knows it.
struct ChatBodies {
  Json json;
  std::string dumped;
  std::string Body(bool unique, uint64_t n) const {
    if (!unique) return dumped;
    Json copy = json;
    copy["messages"][1]["content"][1]["text"] = "\nText Recognition: " + std::to_string(n);
    return copy.dump();
  }
};

struct Upload {
  std::string content_type;
  std::string body;
  size_t document_end = 0;  // offset just past the document's bytes in body

  // The body, or with --unique a copy whose document ends in a PDF comment line naming `n`
  // (readers ignore it; its bytes, and so its cache key, are new).
  std::string Body(bool unique, uint64_t n) const {
    if (!unique) return body;
    return body.substr(0, document_end) + "\n%mineru-bench-http " + std::to_string(n) + "\n" +
           body.substr(document_end);
  }
};

Result<Upload> ParseUpload(const BenchHttpArgs& args) {
  MINERU_ASSIGN_OR_RETURN(std::string file, ReadWholeFile(args.file));
  std::string name = std::filesystem::path(args.file).filename().string();
  std::erase_if(name, [](char c) { return c == '"' || c == '\r' || c == '\n'; });
  const std::string boundary = "mineru-bench-http-4f1c9a0e7d";
  Upload u;
  u.content_type = "multipart/form-data; boundary=" + boundary;
  // MinerU's endpoint names its file field "files"; ours takes "file" (or "files").
  const std::string field = args.kind == "file_parse" ? "files" : "file";
  u.body = "--" + boundary + "\r\nContent-Disposition: form-data; name=\"" + field +
           "\"; filename=\"" + name + "\"\r\nContent-Type: application/pdf\r\n\r\n" + file;
  u.document_end = u.body.size();
  u.body += "\r\n--" + boundary + "--\r\n";
  return u;
}

// One request's outcome: seconds (successful ones), tokens (chat).
struct Sample {
  bool ok = false;
  double seconds = 0;
  int64_t tokens = 0;
  std::string error;
};

Sample ChatOnce(Connection& c, const std::string& body) {
  Sample s;
  auto reply = c.Request("POST", "/v1/chat/completions", "application/json", body);
  if (!reply) {
    s.error = reply.error().ToString();
    return s;
  }
  if (reply->status != 200) {
    s.error = "HTTP " + std::to_string(reply->status) + ": " + reply->body.substr(0, 300);
    return s;
  }
  Json json = ParseJson(reply->body, "chat reply").value_or(Json());
  const Json* tokens = json.is_object() && json.contains("usage") && json["usage"].is_object()
                           ? &json["usage"]["completion_tokens"]
                           : nullptr;
  if (!json.is_object() || !json.contains("choices") || tokens == nullptr ||
      !tokens->is_number_integer()) {
    s.error = "not a chat.completion: " + reply->body.substr(0, 300);
    return s;
  }
  s.tokens = tokens->get<int64_t>();
  s.ok = true;
  return s;
}

Sample ParseOnce(Connection& c, const Upload& upload, const std::string& body,
                 std::chrono::milliseconds poll, std::chrono::seconds timeout) {
  Sample s;
  auto reply = c.Request("POST", "/v1/document/parse", upload.content_type, body);
  if (!reply) {
    s.error = reply.error().ToString();
    return s;
  }
  Json json = ParseJson(reply->body, "submit reply").value_or(Json());
  if (reply->status != 202 || !json.is_object() || !json["task_id"].is_string()) {
    s.error = "submit: HTTP " + std::to_string(reply->status) + ": " + reply->body.substr(0, 300);
    return s;
  }
  const std::string status_url = json.value("status_url", "/v1/tasks/" + json.value("task_id", ""));
  const auto give_up = std::chrono::steady_clock::now() + timeout;
  while (true) {
    auto polled = c.Request("GET", status_url, "", "");
    if (!polled) {
      s.error = polled.error().ToString();
      return s;
    }
    Json task = ParseJson(polled->body, "task", JsonFileLimits()).value_or(Json());
    const std::string status = task.is_object() ? task.value("status", "") : "";
    if (polled->status != 200 || status.empty()) {
      s.error = "poll: HTTP " + std::to_string(polled->status) + ": " + polled->body.substr(0, 300);
      return s;
    }
    if (status == "completed") break;
    if (status == "failed" || status == "cancelled") {
      s.error = "task " + status + ": " + task.value("error", Json()).dump();
      return s;
    }
    if (std::chrono::steady_clock::now() > give_up) {
      s.error = "task not completed within --timeout";
      return s;
    }
    std::this_thread::sleep_for(poll);
  }
  s.ok = true;
  return s;
}

Sample GetOnce(Connection& c, const std::string& path) {
  Sample s;
  auto reply = c.Request("GET", path, "", "");
  if (!reply) {
    s.error = reply.error().ToString();
    return s;
  }
  if (reply->status != 200) {
    s.error = "GET " + path + ": HTTP " + std::to_string(reply->status) + ": " +
              reply->body.substr(0, 300);
    return s;
  }
  s.ok = true;
  return s;
}

Sample FileParseOnce(Connection& c, const Upload& upload, const std::string& body) {
  Sample s;
  auto reply = c.Request("POST", "/file_parse", upload.content_type, body);
  if (!reply) {
    s.error = reply.error().ToString();
    return s;
  }
  Json json = ParseJson(reply->body, "file_parse reply", JsonFileLimits()).value_or(Json());
  if (reply->status != 200 || !json.is_object() || !json["results"].is_object()) {
    s.error =
        "file_parse: HTTP " + std::to_string(reply->status) + ": " + reply->body.substr(0, 300);
    return s;
  }
  s.ok = true;
  return s;
}

double Percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  // Nearest rank: the smallest value with at least p% of the values at or below it.
  const auto rank = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(sorted.size())));
  return sorted[std::clamp<size_t>(rank, 1, sorted.size()) - 1];
}

int RunBenchHttp(const BenchHttpArgs& args) {
  auto target = ParseUrl(args.url);
  if (!target) return ReportError(target.error());
  const bool chat = args.kind == "chat";
  const bool get = args.kind == "get";
  ChatBodies chat_body;
  Upload upload;
  if (get) {
    if (args.path.empty() || args.path[0] != '/') {
      std::fprintf(stderr, "mineru-cpp: error: --kind get needs --path /PATH\n");
      return kExitUsage;
    }
  } else if (chat) {
    auto body = ChatBody(args);
    if (!body) return ReportError(body.error());
    chat_body.json = std::move(*body);
    chat_body.dumped = chat_body.json.dump();
  } else {
    if (args.file.empty()) {
      std::fprintf(stderr, "mineru-cpp: error: --kind %s needs --file DOCUMENT\n",
                   args.kind.c_str());
      return kExitUsage;
    }
    auto built = ParseUpload(args);
    if (!built) return ReportError(built.error());
    upload = std::move(*built);
  }
  const std::chrono::seconds timeout(args.timeout_s);
  std::printf("bench-http %s %s: %d requests per client%s\n", args.kind.c_str(), args.url.c_str(),
              args.requests,
              chat ? (", max_tokens " + std::to_string(args.max_tokens)).c_str() : "");
  std::printf("%8s %9s %7s %9s %9s %9s %9s %9s%s\n", "clients", "requests", "errors", "req/s",
              "p50_ms", "p90_ms", "p99_ms", "max_ms", chat ? "  tokens/s" : "");
  std::string first_error;
  int64_t total_errors = 0;
  for (int clients : args.clients) {
    std::vector<std::vector<Sample>> samples(static_cast<size_t>(clients));
    std::vector<std::thread> threads;
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < clients; ++i) {
      threads.emplace_back([&, i] {
        Connection connection(target->host, target->port,
                              {.receive_timeout = timeout,
                               .send_timeout = timeout,
                               .max_response_bytes = kMaxResponseBytes});
        for (int r = 0; r < args.requests; ++r) {
          const auto t0 = std::chrono::steady_clock::now();
          Sample s = chat  ? ChatOnce(connection, chat_body.Body(args.unique, NextUnique()))
                     : get ? GetOnce(connection, args.path)
                     : args.kind == "file_parse"
                         ? FileParseOnce(connection, upload, upload.Body(args.unique, NextUnique()))
                         : ParseOnce(connection, upload, upload.Body(args.unique, NextUnique()),
                                     std::chrono::milliseconds(args.poll_ms), timeout);
          s.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
          samples[static_cast<size_t>(i)].push_back(std::move(s));
        }
      });
    }
    for (std::thread& t : threads) t.join();
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::vector<double> latencies;
    int64_t requests = 0, errors = 0, tokens = 0;
    for (const auto& list : samples) {
      for (const Sample& s : list) {
        ++requests;
        if (!s.ok) {
          ++errors;
          if (first_error.empty()) first_error = s.error;
          continue;
        }
        latencies.push_back(s.seconds * 1000);
        tokens += s.tokens;
      }
    }
    std::sort(latencies.begin(), latencies.end());
    total_errors += errors;
    const double ok_per_second = static_cast<double>(requests - errors) / wall;
    std::printf("%8d %9lld %7lld %9.2f %9.1f %9.1f %9.1f %9.1f", clients,
                static_cast<long long>(requests), static_cast<long long>(errors), ok_per_second,
                Percentile(latencies, 50), Percentile(latencies, 90), Percentile(latencies, 99),
                latencies.empty() ? 0.0 : latencies.back());
    if (chat) std::printf(" %9.1f", static_cast<double>(tokens) / wall);
    std::printf("\n");
    std::fflush(stdout);
  }
  if (total_errors > 0) {
    std::fprintf(stderr, "mineru-cpp: error: %lld requests failed; first: %s\n",
                 static_cast<long long>(total_errors), first_error.c_str());
    return kExitFailure;
  }
  return 0;
}

}  // namespace

void AddBenchHttpCommand(CLI::App& app, const GlobalOptions& /*global*/, int* exit_code) {
  auto* cmd = app.add_subcommand(
      "bench-http", "Load a running server from keep-alive clients: latency and throughput");
  auto args = std::make_shared<BenchHttpArgs>();
  cmd->add_option("--url", args->url, "Server address (http://HOST:PORT)")->capture_default_str();
  cmd->add_option("--clients", args->clients, "Client counts to run, one row each (1,10,50)")
      ->delimiter(',')
      ->check(CLI::Range(1, 4096));
  cmd->add_option("--requests", args->requests, "Requests per client")
      ->check(CLI::Range(1, 1 << 20))
      ->capture_default_str();
  cmd->add_option("--kind", args->kind,
                  "chat: /v1/chat/completions; parse: /v1/document/parse, polled; file_parse: "
                  "MinerU's /file_parse; get: GET --path (e.g. a task's state)")
      ->check(CLI::IsMember({"chat", "parse", "file_parse", "get"}))
      ->capture_default_str();
  cmd->add_option("--image", args->image, "Image (PNG or JPEG) for chat (default: generated)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--path", args->path, "Path for get (/v1/tasks/ID, /health, ...)");
  cmd->add_option("--file", args->file, "Document (PDF) for parse and file_parse")
      ->check(CLI::ExistingFile);
  cmd->add_option("--model", args->model, "\"model\" of chat requests (default: not sent)");
  cmd->add_option("--max-tokens", args->max_tokens, "max_tokens of chat requests")
      ->check(CLI::Range(1, 1 << 20))
      ->capture_default_str();
  cmd->add_flag("--unique", args->unique,
                "make every request different (parse kinds: a PDF comment appended to the upload; "
                "chat: a number appended to the prompt), so nothing is answered from a cache: "
                "measures the model, not the cache");
  cmd->add_option("--poll-ms", args->poll_ms, "Task polling interval for parse")
      ->check(CLI::Range(1, 60'000))
      ->capture_default_str();
  cmd->add_option("--timeout", args->timeout_s, "Seconds one request (or task) may take")
      ->check(CLI::Range(1, 86'400))
      ->capture_default_str();
  cmd->callback([=] { *exit_code = RunBenchHttp(*args); });
}

}  // namespace mineru::apps
