// SPDX-License-Identifier: Apache-2.0
// An OpenAI-compatible model server the pipeline sends its requests to (`--model-server URL`:
// vLLM, SGLang, LMDeploy, llama-server, another `mineru-cpp serve`): where it is, how it is
// reached, and which model it serves.
//
// The URL is the server's base: "http://gpu-1:30000", "https://models.example/mineru/" and
// "http://gpu-1:30000/v1" all work; trailing "/"s, then one trailing "/v1", then "/"s again are
// dropped, and the endpoints are BASE/v1/models and BASE/v1/chat/completions. (MinerU's client cuts
// a URL without a trailing slash down to scheme://host:port; we keep a path prefix, which a reverse
// proxy needs.) Proxies from the environment (http_proxy, https_proxy, no_proxy) apply, as with
// any libcurl client.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "pipeline/profile.h"
#include "pipeline/retry_policy.h"

namespace mineru::pipeline {

struct ModelServerOptions {
  static constexpr int kDefaultConcurrency = 100;  // MinerU's client: max_concurrency 100
  static constexpr std::chrono::milliseconds kDefaultConnectTimeout{10'000};   // the client's
  static constexpr std::chrono::milliseconds kDefaultRequestTimeout{600'000};  // http_timeout
  static constexpr std::chrono::milliseconds kDefaultDeadline{1'800'000};
  static constexpr uint64_t kDefaultMaxAnswerBytes = uint64_t{16} << 20;

  std::string url;      // the server's base URL (see above)
  std::string model;    // the served model id every request names
  std::string api_key;  // sent as "Authorization: Bearer KEY"; empty: none
  // PEM file of the certificate authorities an https:// server's certificate is checked
  // against; empty: the system's store. The check itself is never turned off.
  std::string ca_file;
  // Requests in flight at once, over every document of the process; more wait their turn
  // (lower engine::Request::priority first, then in order of submission).
  int concurrency = kDefaultConcurrency;
  std::chrono::milliseconds connect_timeout = kDefaultConnectTimeout;
  // One attempt, connect to last byte.
  std::chrono::milliseconds request_timeout = kDefaultRequestTimeout;
  // One request, from Submit to its answer, every attempt and wait included; the request's own
  // engine deadline wins when it is sooner.
  std::chrono::milliseconds deadline = kDefaultDeadline;
  RetryPolicy retry;
  // Largest answer body read; a larger one fails the request (not retried).
  uint64_t max_answer_bytes = kDefaultMaxAnswerBytes;
  // Cut from the end of every answer, once (MinerU's MINERU_VLM_END_TOKEN; empty: nothing).
  std::string end_token = "<|im_end|>";
  // PNG zlib level of the crops sent (pipeline/chat_request_body.h).
  int png_compression_level = 1;
};

// The base URL as described above, or kInvalidArgument naming what is wrong (not http or
// https, no host, a query or fragment).
Result<std::string> NormalizeModelServerUrl(std::string_view url);

// One entry of GET /v1/models.
struct ServedModel {
  std::string id;
  // "mineru_profile" of the entry, which `mineru-cpp serve` adds ("2509" or "pro"); other
  // servers do not say.
  std::optional<Profile> profile;
};

// GET BASE/v1/models (with the API key), retried by options.retry within options.deadline.
// Errors: kUnavailable (unreachable, a status other than 200 after the retries), kCorrupt (not
// the OpenAI list shape: {"data": [{"id": "..."}, ...]}), kNotFound (the list is empty).
Result<std::vector<ServedModel>> ListServedModels(const ModelServerOptions& options);

// The model to name: `wanted` when the server lists it (kNotFound listing the ids otherwise),
// else the first listed.
Result<ServedModel> ChooseServedModel(const std::vector<ServedModel>& models,
                                      std::string_view wanted);

// The profile for a served model: `forced`; the server's own word (mineru_profile); else
// DetectProfile on its id (a "MinerU2.5-Pro" name means pro; anything else 2509).
ProfileChoice ServedModelProfile(const ServedModel& model, std::optional<Profile> forced);

}  // namespace mineru::pipeline
