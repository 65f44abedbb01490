// SPDX-License-Identifier: Apache-2.0
#include "apps/hub_download.h"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "base/curl_easy.h"
#include "base/json.h"
#include "base/mapped_file.h"

namespace mineru::apps {
namespace {

namespace fs = std::filesystem;

// Listings are small; a larger answer is not a model listing.
constexpr size_t kMaxListingBytes = size_t{16} << 20;

std::string Env(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? value : "";
}

// Every request's settings, from libcurl's defaults (the handle is reused from file to file).
void Prepare(CurlEasy& curl, const std::string& url) {
  curl.Reset();
  CURL* h = curl.get();
  curl_easy_setopt(h, CURLOPT_URL, url.c_str());
  curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 1L);
  curl_easy_setopt(h, CURLOPT_MAXREDIRS, 10L);
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, 10L);
  // A stalled transfer (under 1 KB/s for 60 s) is an error, not a hang.
  curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1024L);
  curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, 60L);
  curl_easy_setopt(h, CURLOPT_USERAGENT, "mineru-cpp/0.1");
  if (const std::string token = Env("HF_TOKEN"); !token.empty()) {
    curl.AddHeader("Authorization: Bearer " + token);
    curl.UseHeaders();
  }
}

Error Unreachable(const std::string& url, const std::string& why, const std::string& repo) {
  return Error{ErrorCode::kUnavailable,
               fmt::format("cannot download {} ({}: {}). Without network, fetch the checkpoint "
                           "where there is (for instance `huggingface-cli download {}`) and pass "
                           "its directory with --model DIR",
                           repo, url, why, repo)};
}

Result<std::string> Fetch(CurlEasy& curl, const std::string& url, const std::string& repo) {
  CurlBody body;
  body.max_bytes = kMaxListingBytes;
  Prepare(curl, url);
  body.Attach(curl.get());
  const CURLcode code = curl_easy_perform(curl.get());
  if (code != CURLE_OK) return tl::unexpected(Unreachable(url, curl_easy_strerror(code), repo));
  if (const long status = curl.ResponseCode(); status != 200) {
    return tl::unexpected(Unreachable(url, fmt::format("HTTP {}", status), repo));
  }
  return std::move(body.bytes);
}

struct Transfer {
  std::FILE* file = nullptr;
  CurlEasy* curl = nullptr;
  int64_t offset = 0;    // bytes already on disk when the request started
  bool checked = false;  // the status was looked at (first body bytes)
  bool failed = false;
  std::string name;
  bool progress = false;
  std::chrono::steady_clock::time_point last_report{};
};

size_t WriteBody(char* data, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  if (!t->checked) {
    t->checked = true;
    // 206: the server resumed at our offset; 200: it sends the whole file, start over.
    if (t->curl->ResponseCode() == 200 && t->offset > 0) {
      if (std::fflush(t->file) != 0 || ftruncate(fileno(t->file), 0) != 0 ||
          std::fseek(t->file, 0, SEEK_SET) != 0) {
        t->failed = true;
        return 0;
      }
      t->offset = 0;
    } else if (t->curl->ResponseCode() != 200 && t->curl->ResponseCode() != 206) {
      return size * n;  // an error page: discarded, reported from the status
    }
  }
  if (std::fwrite(data, size, n, t->file) != n) {
    t->failed = true;
    return 0;
  }
  return size * n;
}

int Progress(void* user, curl_off_t total, curl_off_t now, curl_off_t, curl_off_t) {
  auto* t = static_cast<Transfer*>(user);
  const auto clock = std::chrono::steady_clock::now();
  if (!t->progress || clock - t->last_report < std::chrono::milliseconds(500)) return 0;
  t->last_report = clock;
  const double done = static_cast<double>(t->offset + now) / 1e6;
  const double all = static_cast<double>(t->offset + total) / 1e6;
  std::fprintf(stderr, "\rdownloading %s: %.1f / %.1f MB   ", t->name.c_str(), done, all);
  return 0;
}

Status DownloadFile(CurlEasy& curl, const std::string& url, const fs::path& target,
                    const std::string& repo, bool progress) {
  const fs::path partial = target.string() + ".incomplete";
  std::error_code ec;
  fs::create_directories(target.parent_path(), ec);
  if (ec)
    return Fail(ErrorCode::kIo, "{}: cannot create: {}", target.parent_path().string(),
                ec.message());
  const auto existing = fs::exists(partial, ec) ? fs::file_size(partial, ec) : 0;
  std::FILE* file = std::fopen(partial.c_str(), "ab");
  if (file == nullptr) return Fail(ErrorCode::kIo, "{}: cannot open for writing", partial.string());
  Transfer t;
  t.file = file;
  t.curl = &curl;
  t.offset = ec ? 0 : static_cast<int64_t>(existing);
  t.name = target.filename().string();
  t.progress = progress && isatty(STDERR_FILENO) == 1;
  Prepare(curl, url);
  curl_easy_setopt(curl.get(), CURLOPT_WRITEFUNCTION, WriteBody);
  curl_easy_setopt(curl.get(), CURLOPT_WRITEDATA, &t);
  // A Range header (not CURLOPT_RESUME_FROM, which fails when a server ignores it): 206 resumes,
  // 200 restarts (WriteBody truncates the partial file).
  const std::string range = fmt::format("{}-", t.offset);
  if (t.offset > 0) curl_easy_setopt(curl.get(), CURLOPT_RANGE, range.c_str());
  curl_easy_setopt(curl.get(), CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(curl.get(), CURLOPT_XFERINFOFUNCTION, Progress);
  curl_easy_setopt(curl.get(), CURLOPT_XFERINFODATA, &t);
  const CURLcode code = curl_easy_perform(curl.get());
  const long status = curl.ResponseCode();
  const bool closed = std::fclose(file) == 0;
  if (t.progress) std::fprintf(stderr, "\n");
  if (t.failed || !closed) return Fail(ErrorCode::kIo, "{}: write failed", partial.string());
  // 416: the partial file already holds every byte.
  if (code != CURLE_OK && !(status == 416 && t.offset > 0)) {
    return tl::unexpected(Unreachable(url, curl_easy_strerror(code), repo));
  }
  if (status != 200 && status != 206 && status != 416) {
    return tl::unexpected(Unreachable(url, fmt::format("HTTP {}", status), repo));
  }
  fs::rename(partial, target, ec);
  if (ec) return Fail(ErrorCode::kIo, "{}: cannot rename: {}", target.string(), ec.message());
  if (progress) std::fprintf(stderr, "downloaded %s\n", target.filename().c_str());
  return OkStatus();
}

// A sibling's relative path is safe when it stays inside the snapshot directory.
bool SafeRelativePath(const std::string& name) {
  if (name.empty() || name.front() == '/' || name.find('\\') != std::string::npos) return false;
  for (const auto& part : fs::path(name)) {
    if (part == ".." || part == ".") return false;
  }
  return true;
}

}  // namespace

std::string HubCacheDir() {
  if (const std::string cache = Env("HF_HUB_CACHE"); !cache.empty()) return cache;
  if (const std::string home = Env("HF_HOME"); !home.empty()) return home + "/hub";
  const std::string user = Env("HOME");
  return (user.empty() ? std::string(".") : user) + "/.cache/huggingface/hub";
}

Result<std::string> DownloadFromHub(const std::string& repo, const HubDownload& options) {
  CurlEasy curl;  // InitCurl() first: "failed to start" covers both
  if (!curl) return Fail(ErrorCode::kUnavailable, "libcurl failed to start");
  const std::string listing_url =
      fmt::format("{}/api/models/{}/revision/{}", options.endpoint, repo, options.revision);
  MINERU_ASSIGN_OR_RETURN(std::string body, Fetch(curl, listing_url, repo));
  MINERU_ASSIGN_OR_RETURN(Json listing, ParseJson(body, listing_url));
  MINERU_ASSIGN_OR_RETURN(std::optional<std::string> sha, FindString(listing, "sha", listing_url));
  const auto siblings = listing.find("siblings");
  if (!sha || sha->empty() || !SafeRelativePath(*sha) || siblings == listing.end() ||
      !siblings->is_array()) {
    return Fail(ErrorCode::kCorrupt, "{}: no 'sha' or 'siblings' in the model listing",
                listing_url);
  }
  const size_t slash = repo.find('/');
  const fs::path root = fs::path(options.cache_dir) /
                        ("models--" + repo.substr(0, slash) + "--" + repo.substr(slash + 1));
  const fs::path snapshot = root / "snapshots" / *sha;
  for (const Json& sibling : *siblings) {
    MINERU_ASSIGN_OR_RETURN(std::optional<std::string> name,
                            FindString(sibling, "rfilename", listing_url));
    if (!name || !SafeRelativePath(*name)) {
      return Fail(ErrorCode::kCorrupt, "{}: unsafe or missing file name in the listing",
                  listing_url);
    }
    std::error_code ec;
    if (fs::is_regular_file(snapshot / *name, ec)) continue;  // already complete
    MINERU_RETURN_IF_ERROR(
        DownloadFile(curl, fmt::format("{}/{}/resolve/{}/{}", options.endpoint, repo, *sha, *name),
                     snapshot / *name, repo, options.progress));
  }
  const std::string ref = *sha;
  std::error_code ec;
  fs::create_directories(root / "refs", ec);
  MINERU_RETURN_IF_ERROR(
      WriteFileAtomically((root / "refs" / options.revision).string(),
                          std::span(reinterpret_cast<const uint8_t*>(ref.data()), ref.size())));
  return snapshot.string();
}

}  // namespace mineru::apps
