// SPDX-License-Identifier: Apache-2.0
// Tasks and their outputs as the two task APIs answer them: ours (/v1/tasks, docs/API.md) and
// MinerU's (/tasks, /file_parse: MinerU mineru/cli/fast_api.py).
#pragma once

#include <span>
#include <string>
#include <vector>

#include "base/json.h"
#include "cache/document_outputs.h"
#include "service/upload_form.h"
#include "tasks/task.h"

namespace mineru::service {

// "2026-11-30T17:00:00Z" (UTC, whole seconds).
std::string Iso8601(jobs::WallClock::time_point t);

// Our task object: {task_id, status, file_names, created_at, started_at, completed_at, error,
// queued_ahead, progress{...}, status_url, events_url, result_url}. `prefix` is the URL prefix
// of the task routes ("/v1/tasks").
Json TaskJson(const jobs::TaskInfo& task, std::string_view prefix);

// MinerU's task object: {task_id, status, backend, file_names, created_at, started_at,
// completed_at, error, status_url, result_url, queued_ahead, message}.
Json MineruTaskJson(const jobs::TaskInfo& task, std::string_view backend);

// Our result: {task_id, documents: [{name, markdown, middle_json, content_list, model_json,
// images: [names]}]} with the JSON outputs as objects.
Json ResultJson(const std::string& task_id, const std::vector<jobs::DocumentOutputs>& docs);

// MinerU's /file_parse body: {backend, version, results: {name: {md_content?, middle_json?,
// model_output?, content_list?, images?}}} with JSON outputs as JSON-encoded strings and images
// as data URLs, each present only when asked for.
Json MineruResultJson(const std::vector<jobs::DocumentOutputs>& docs, const ReturnOptions& returns,
                      std::string_view backend);

// A file added to a ZIP as it is: its path in the archive and its bytes.
struct ZipEntry {
  std::string path;
  std::string bytes;
};

// A ZIP of the outputs: <name>/<name>.md, _middle.json, _model.json, _content_list.json,
// images/*.jpg — those `returns` asks for (everything with AllOutputs()) — then `extra`.
Result<std::string> OutputsZip(const std::vector<jobs::DocumentOutputs>& docs,
                               const ReturnOptions& returns, std::span<const ZipEntry> extra = {});
ReturnOptions AllOutputs();

// The MIME type of an output image by its name's extension (.jpg, .png, .gif, .bmp, .webp: the
// types the pipeline writes); anything else "application/octet-stream".
std::string_view OutputImageMime(std::string_view name);

// The version reported by MinerU-compatible answers.
std::string_view ServiceVersion();

}  // namespace mineru::service
