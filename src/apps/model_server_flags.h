// SPDX-License-Identifier: Apache-2.0
// --model-server and its companions, shared by parse, serve and worker: with --model-server URL
// the pipeline sends every model request to that OpenAI-compatible server
// (pipeline/remote_generator.h) and no weights are loaded here. docs/SCALE_OUT.md "In front of
// a model server" and docs/LIMITS.md "Model server".
#pragma once

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "pipeline/model_server.h"

namespace mineru::apps {

// The environment variable the API key is also read from (MinerU's client reads the same one).
inline constexpr char kModelServerApiKeyEnv[] = "MINERU_VL_API_KEY";

struct ModelServerFlags {
  using Server = pipeline::ModelServerOptions;
  std::string url;
  std::string model;
  std::string api_key;
  std::string ca_file;
  int concurrency = Server::kDefaultConcurrency;
  double timeout_s = std::chrono::duration<double>(Server::kDefaultRequestTimeout).count();
  double connect_timeout_s = std::chrono::duration<double>(Server::kDefaultConnectTimeout).count();
  double deadline_s = std::chrono::duration<double>(Server::kDefaultDeadline).count();
  int retries = pipeline::RetryPolicy::kDefaultMaxRetries;
  uint64_t max_answer_bytes = Server::kDefaultMaxAnswerBytes;

  bool enabled() const { return !url.empty(); }

  void Register(CLI::App& cmd) {
    auto* group = cmd.add_option_group("Model server", "Send model requests to a model server");
    CLI::Option* server =
        group->add_option("--model-server", url,
                          "OpenAI-compatible model server (vLLM, llama-server, mineru-cpp serve) "
                          "that answers every model request: http(s)://HOST:PORT[/PREFIX]; no "
                          "weights are loaded here");
    // Register after --model: the two name different models.
    if (CLI::Option* model_option = cmd.get_option_no_throw("--model"); model_option != nullptr) {
      server->excludes(model_option);
    }
    group->add_option("--model-server-model", model,
                      "Served model id to request (default: the first of GET /v1/models)");
    group->add_option(
        "--model-server-api-key", api_key,
        std::string("Bearer token for the model server (default: $") + kModelServerApiKeyEnv + ")");
    group
        ->add_option("--model-server-ca-file", ca_file,
                     "PEM certificate authorities for an https:// model server (default: the "
                     "system's)")
        ->check(CLI::ExistingFile);
    group
        ->add_option("--model-server-concurrency", concurrency,
                     "Model requests in flight at once, over every document of the process")
        ->check(CLI::Range(1, 4096))
        ->capture_default_str();
    group
        ->add_option("--model-server-timeout", timeout_s,
                     "Seconds one attempt may take, connect to last byte")
        ->check(CLI::Range(0.001, 86400.0))
        ->capture_default_str();
    group->add_option("--model-server-connect-timeout", connect_timeout_s, "Seconds to connect")
        ->check(CLI::Range(0.001, 3600.0))
        ->capture_default_str();
    group
        ->add_option("--model-server-deadline", deadline_s,
                     "Seconds one request may take in all, every retry and wait included")
        ->check(CLI::Range(0.001, 604800.0))
        ->capture_default_str();
    group
        ->add_option("--model-server-retries", retries,
                     "Retries of a request after connection errors, timeouts, 429 and "
                     "500/502/503/504 (exponential backoff with jitter; Retry-After honoured)")
        ->check(CLI::Range(0, 100))
        ->capture_default_str();
    group
        ->add_option("--model-server-max-answer-bytes", max_answer_bytes,
                     "Largest answer body read from the model server")
        ->check(CLI::Range(uint64_t{1024}, uint64_t{1} << 32))
        ->capture_default_str();
  }

  pipeline::ModelServerOptions Options() const {
    using std::chrono::milliseconds;
    auto ms = [](double seconds) {
      return milliseconds(std::max<int64_t>(1, static_cast<int64_t>(seconds * 1000.0)));
    };
    pipeline::ModelServerOptions out;
    out.url = url;
    out.model = model;
    out.api_key = api_key;
    if (out.api_key.empty()) {
      if (const char* env = std::getenv(kModelServerApiKeyEnv); env != nullptr) out.api_key = env;
    }
    out.ca_file = ca_file;
    out.concurrency = concurrency;
    out.request_timeout = ms(timeout_s);
    out.connect_timeout = ms(connect_timeout_s);
    out.deadline = ms(deadline_s);
    out.retry.max_retries = retries;
    out.max_answer_bytes = max_answer_bytes;
    return out;
  }
};

}  // namespace mineru::apps
