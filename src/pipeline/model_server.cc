// SPDX-License-Identifier: Apache-2.0
#include "pipeline/model_server.h"

#include <curl/curl.h>
#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <random>
#include <thread>

#include "base/json.h"
#include "pipeline/model_server_transfer.h"

namespace mineru::pipeline {
namespace {

using Clock = std::chrono::steady_clock;

// One part of a parsed URL, or empty when it has none.
std::string UrlPart(CURLU* url, CURLUPart part) {
  char* value = nullptr;
  if (curl_url_get(url, part, &value, 0) != CURLUE_OK || value == nullptr) return {};
  std::string out(value);
  curl_free(value);
  return out;
}

}  // namespace

Result<std::string> NormalizeModelServerUrl(std::string_view text) {
  InitCurl();
  const std::string quoted(text.substr(0, 256));
  std::unique_ptr<CURLU, decltype(&curl_url_cleanup)> url(curl_url(), &curl_url_cleanup);
  if (!url) return Fail(ErrorCode::kInternal, "libcurl: cannot parse URLs");
  // No default scheme: "host:8000" is refused rather than guessed.
  if (curl_url_set(url.get(), CURLUPART_URL, std::string(text).c_str(), 0) != CURLUE_OK) {
    return Fail(ErrorCode::kInvalidArgument,
                "model server URL '{}': not a URL (e.g. http://host:30000)", quoted);
  }
  const std::string scheme = UrlPart(url.get(), CURLUPART_SCHEME);
  if (scheme != "http" && scheme != "https") {
    return Fail(ErrorCode::kInvalidArgument, "model server URL '{}': only http and https", quoted);
  }
  if (UrlPart(url.get(), CURLUPART_HOST).empty()) {
    return Fail(ErrorCode::kInvalidArgument, "model server URL '{}': no host", quoted);
  }
  if (!UrlPart(url.get(), CURLUPART_QUERY).empty() ||
      !UrlPart(url.get(), CURLUPART_FRAGMENT).empty()) {
    return Fail(ErrorCode::kInvalidArgument,
                "model server URL '{}': a base URL has no query or fragment", quoted);
  }
  std::string path = UrlPart(url.get(), CURLUPART_PATH);
  auto drop_slashes = [&] {
    while (path.ends_with('/')) path.pop_back();
  };
  drop_slashes();
  if (path.ends_with("/v1")) path.resize(path.size() - 3);
  drop_slashes();
  if (curl_url_set(url.get(), CURLUPART_PATH, path.empty() ? "/" : path.c_str(), 0) != CURLUE_OK) {
    return Fail(ErrorCode::kInvalidArgument, "model server URL '{}': bad path", quoted);
  }
  std::string out = UrlPart(url.get(), CURLUPART_URL);
  while (out.ends_with('/')) out.pop_back();
  return out;
}

Result<std::vector<ServedModel>> ListServedModels(const ModelServerOptions& options) {
  MINERU_ASSIGN_OR_RETURN(const std::string base, NormalizeModelServerUrl(options.url));
  const std::string url = base + "/v1/models";
  const Clock::time_point deadline = Clock::now() + options.deadline;
  std::mt19937_64 rng(std::random_device{}());
  AttemptOutcome outcome;
  for (int attempt = 0;; ++attempt) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    MINERU_ASSIGN_OR_RETURN(
        auto transfer,
        ModelServerTransfer::Make(options, url, nullptr, std::min(options.request_timeout, left)));
    outcome = transfer->Perform();
    if (outcome.kind != AttemptOutcome::Kind::kRetryable || attempt >= options.retry.max_retries) {
      break;
    }
    const std::chrono::milliseconds wait =
        outcome.retry_after.value_or(BackoffDelay(attempt + 1, options.retry.backoff_base, rng));
    if (Clock::now() + wait >= deadline) break;
    std::this_thread::sleep_for(wait);
  }
  if (outcome.kind != AttemptOutcome::Kind::kAnswer) {
    return Fail(ErrorCode::kUnavailable, "model server: GET /v1/models: {}", outcome.error);
  }
  auto json = ParseJson(outcome.body, "/v1/models");
  if (!json) return Fail(ErrorCode::kCorrupt, "model server: /v1/models: {}", json.error().message);
  auto data = json->is_object() ? json->find("data") : json->end();
  if (!json->is_object() || data == json->end() || !data->is_array()) {
    return Fail(ErrorCode::kCorrupt, "model server: /v1/models is not {{\"data\": [...]}}");
  }
  std::vector<ServedModel> models;
  for (const Json& entry : *data) {
    auto id = entry.is_object() ? entry.find("id") : entry.end();
    if (!entry.is_object() || id == entry.end() || !id->is_string() ||
        id->get_ref<const std::string&>().empty()) {
      return Fail(ErrorCode::kCorrupt, "model server: a /v1/models entry has no string id");
    }
    ServedModel model;
    model.id = id->get<std::string>();
    if (auto profile = entry.find("mineru_profile");
        profile != entry.end() && profile->is_string()) {
      model.profile = ParseProfileName(profile->get_ref<const std::string&>());
    }
    models.push_back(std::move(model));
  }
  if (models.empty()) return Fail(ErrorCode::kNotFound, "model server: /v1/models lists no model");
  return models;
}

Result<ServedModel> ChooseServedModel(const std::vector<ServedModel>& models,
                                      std::string_view wanted) {
  if (models.empty()) return Fail(ErrorCode::kNotFound, "model server lists no model");
  if (wanted.empty()) return models.front();
  for (const ServedModel& m : models) {
    if (m.id == wanted) return m;
  }
  std::string ids;
  for (const ServedModel& m : models) ids += (ids.empty() ? "" : ", ") + m.id;
  return Fail(ErrorCode::kNotFound, "model server does not serve '{}' (it serves: {})", wanted,
              ids);
}

ProfileChoice ServedModelProfile(const ServedModel& model, std::optional<Profile> forced) {
  if (forced) return DetectProfile({}, forced);
  if (model.profile) {
    return {*model.profile,
            "the model server says mineru_profile " + std::string(ProfileName(*model.profile))};
  }
  ProfileEvidence evidence;
  evidence.model_name = model.id;
  ProfileChoice choice = DetectProfile(evidence);
  choice.reason = choice.profile == Profile::kPro
                      ? "the served model's name '" + model.id + "' says MinerU2.5-Pro"
                      : "the served model '" + model.id +
                            "' neither says its profile nor is named MinerU2.5-Pro (--profile "
                            "forces one)";
  return choice;
}

}  // namespace mineru::pipeline
