// SPDX-License-Identifier: Apache-2.0
#include "tasks/task_store.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "base/json.h"
#include "cache/document_codec.h"

namespace mineru::jobs {
namespace {

constexpr std::string_view kWhere = "shared task";
constexpr std::string_view kOutputsMagic = "MTSK";
constexpr uint32_t kOutputsVersion = 1;
// EncodeSharedTask's format; a value of another version is not read.
constexpr int64_t kTaskFormat = 1;
constexpr int64_t kIntMax = std::numeric_limits<int>::max();

std::string TaskKey(std::string_view id) { return fmt::format("mineru:task:{}", id); }
std::string OutputsKey(std::string_view id) { return fmt::format("mineru:task-outputs:{}", id); }
std::string LeaseKey(std::string_view node) { return fmt::format("mineru:node:{}", node); }
std::string RequestsKey(std::string_view node) {
  return fmt::format("mineru:node:{}:requests", node);
}

int64_t MillisSinceEpoch(WallClock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}
WallClock::time_point FromMillis(int64_t ms) {
  return WallClock::time_point(std::chrono::milliseconds(ms));
}

Json OptionalMillis(const std::optional<WallClock::time_point>& t) {
  return t ? Json(MillisSinceEpoch(*t)) : Json(nullptr);
}

std::optional<TaskStatus> StatusFromName(std::string_view name) {
  for (TaskStatus s : {TaskStatus::kPending, TaskStatus::kProcessing, TaskStatus::kCompleted,
                       TaskStatus::kFailed, TaskStatus::kCancelled}) {
    if (TaskStatusName(s) == name) return s;
  }
  return std::nullopt;
}

// Field readers over untrusted JSON: absent fields are errors unless `optional`.
Result<int64_t> Int(const Json& o, std::string_view key, int64_t min = 0) {
  MINERU_ASSIGN_OR_RETURN(std::optional<int64_t> v, FindInt(o, key, kWhere));
  if (!v) return Fail(ErrorCode::kCorrupt, "{}: '{}' is missing", kWhere, key);
  if (*v < min) return Fail(ErrorCode::kCorrupt, "{}: '{}' is {}", kWhere, key, *v);
  return *v;
}

Result<std::optional<int64_t>> NullableInt(const Json& o, std::string_view key) {
  auto it = o.find(std::string(key));
  if (it == o.end() || it->is_null()) return std::optional<int64_t>();
  MINERU_ASSIGN_OR_RETURN(int64_t v, Int(o, key));
  return std::optional<int64_t>(v);
}

// A time in milliseconds since the epoch, as MillisSinceEpoch writes it: at most what a
// WallClock time point holds (int64 nanoseconds reach the year 2262), so that a larger stored
// value is corrupt instead of overflowing in FromMillis.
constexpr int64_t kMaxMillis =
    std::chrono::duration_cast<std::chrono::milliseconds>(WallClock::duration::max()).count();

Result<std::optional<int64_t>> NullableMillis(const Json& o, std::string_view key) {
  MINERU_ASSIGN_OR_RETURN(std::optional<int64_t> v, NullableInt(o, key));
  if (v && *v > kMaxMillis) {
    return Fail(ErrorCode::kCorrupt, "{}: '{}' is {}, past the clock's range", kWhere, key, *v);
  }
  return v;
}

Result<std::string> String(const Json& o, std::string_view key) {
  MINERU_ASSIGN_OR_RETURN(std::optional<std::string> v, FindString(o, key, kWhere));
  if (!v) return Fail(ErrorCode::kCorrupt, "{}: '{}' is missing", kWhere, key);
  return std::move(*v);
}

Result<std::vector<std::string>> Strings(const Json& o, std::string_view key) {
  auto it = o.find(std::string(key));
  if (it == o.end() || !it->is_array() || it->size() > kMaxSharedTaskDocuments) {
    return Fail(ErrorCode::kCorrupt, "{}: '{}' must be an array of at most {} strings", kWhere, key,
                kMaxSharedTaskDocuments);
  }
  std::vector<std::string> out;
  for (const Json& v : *it) {
    if (!v.is_string()) {
      return Fail(ErrorCode::kCorrupt, "{}: '{}' must hold strings", kWhere, key);
    }
    out.push_back(v.get<std::string>());
  }
  return out;
}

// Converts an error of the JSON helpers (kInvalidArgument) into kCorrupt: the value is bad,
// not the caller's request.
tl::unexpected<Error> Corrupt(const Error& e) { return Fail(ErrorCode::kCorrupt, "{}", e.message); }

Result<SharedTask> DecodeObject(const Json& o) {
  if (!o.is_object()) return Fail(ErrorCode::kCorrupt, "{}: not a JSON object", kWhere);
  MINERU_ASSIGN_OR_RETURN(int64_t format, Int(o, "format"));
  if (format != kTaskFormat) {
    return Fail(ErrorCode::kCorrupt, "{}: format {} (this build reads {})", kWhere, format,
                kTaskFormat);
  }
  SharedTask t;
  TaskInfo& info = t.info;
  MINERU_ASSIGN_OR_RETURN(info.id, String(o, "id"));
  if (!LooksLikeTaskId(info.id)) return Fail(ErrorCode::kCorrupt, "{}: bad id", kWhere);
  MINERU_ASSIGN_OR_RETURN(t.node, String(o, "node"));
  if (!LooksLikeTaskId(t.node)) return Fail(ErrorCode::kCorrupt, "{}: bad node id", kWhere);
  MINERU_ASSIGN_OR_RETURN(int64_t version, Int(o, "version"));
  t.version = static_cast<uint64_t>(version);
  MINERU_ASSIGN_OR_RETURN(std::string status, String(o, "status"));
  std::optional<TaskStatus> s = StatusFromName(status);
  if (!s) return Fail(ErrorCode::kCorrupt, "{}: unknown status '{}'", kWhere, status);
  info.status = *s;
  MINERU_ASSIGN_OR_RETURN(info.file_names, Strings(o, "file_names"));
  MINERU_ASSIGN_OR_RETURN(info.documents, Strings(o, "documents"));
  if (info.documents.size() != info.file_names.size()) {
    return Fail(ErrorCode::kCorrupt, "{}: {} documents for {} files", kWhere, info.documents.size(),
                info.file_names.size());
  }
  for (const std::string& name : info.documents) {
    if (!IsPlainFileName(name)) {
      return Fail(ErrorCode::kCorrupt, "{}: bad document name '{}'", kWhere, name);
    }
  }
  auto options = o.find("options");
  if (options == o.end() || !options->is_object()) {
    return Fail(ErrorCode::kCorrupt, "{}: 'options' must be an object", kWhere);
  }
  MINERU_ASSIGN_OR_RETURN(std::optional<bool> formula, FindBool(*options, "formula", kWhere));
  MINERU_ASSIGN_OR_RETURN(std::optional<bool> table, FindBool(*options, "table", kWhere));
  MINERU_ASSIGN_OR_RETURN(std::optional<bool> image_analysis,
                          FindBool(*options, "image_analysis", kWhere));
  info.options.formula = formula.value_or(true);
  info.options.table = table.value_or(true);
  info.options.image_analysis = image_analysis;
  MINERU_ASSIGN_OR_RETURN(std::optional<int64_t> start, NullableInt(*options, "start_page"));
  MINERU_ASSIGN_OR_RETURN(std::optional<int64_t> end, NullableInt(*options, "end_page"));
  if ((start && *start > kIntMax) || (end && *end > kIntMax)) {
    return Fail(ErrorCode::kCorrupt, "{}: page range out of range", kWhere);
  }
  if (start) info.options.start_page = static_cast<int>(*start);
  if (end) info.options.end_page = static_cast<int>(*end);
  MINERU_ASSIGN_OR_RETURN(std::optional<int64_t> created, NullableMillis(o, "created_at_ms"));
  if (!created) return Fail(ErrorCode::kCorrupt, "{}: 'created_at_ms' is missing", kWhere);
  info.created_at = FromMillis(*created);
  MINERU_ASSIGN_OR_RETURN(std::optional<int64_t> started, NullableMillis(o, "started_at_ms"));
  if (started) info.started_at = FromMillis(*started);
  MINERU_ASSIGN_OR_RETURN(std::optional<int64_t> completed, NullableMillis(o, "completed_at_ms"));
  if (completed) info.completed_at = FromMillis(*completed);
  MINERU_ASSIGN_OR_RETURN(info.error, FindString(o, "error", kWhere));
  MINERU_ASSIGN_OR_RETURN(int64_t ahead, Int(o, "queued_ahead"));
  info.queued_ahead = static_cast<int>(std::min<int64_t>(ahead, kIntMax));
  auto progress = o.find("progress");
  if (progress == o.end() || !progress->is_object()) {
    return Fail(ErrorCode::kCorrupt, "{}: 'progress' must be an object", kWhere);
  }
  TaskProgress& p = info.progress;
  const auto as_int = [](int64_t v) { return static_cast<int>(std::min<int64_t>(v, kIntMax)); };
  MINERU_ASSIGN_OR_RETURN(int64_t docs_done, Int(*progress, "documents_done"));
  MINERU_ASSIGN_OR_RETURN(int64_t docs_total, Int(*progress, "documents_total"));
  MINERU_ASSIGN_OR_RETURN(int64_t pages_done, Int(*progress, "pages_done"));
  MINERU_ASSIGN_OR_RETURN(int64_t pages_total, Int(*progress, "pages_total"));
  MINERU_ASSIGN_OR_RETURN(p.blocks_done, Int(*progress, "blocks_done"));
  MINERU_ASSIGN_OR_RETURN(p.generated_tokens, Int(*progress, "generated_tokens"));
  p.documents_done = as_int(docs_done);
  p.documents_total = as_int(docs_total);
  p.pages_done = as_int(pages_done);
  p.pages_total = as_int(pages_total);
  MINERU_ASSIGN_OR_RETURN(int64_t hits, Int(o, "cache_hits"));
  info.cache_hits = as_int(hits);
  MINERU_ASSIGN_OR_RETURN(info.near_duplicates, Strings(o, "near_duplicates"));
  MINERU_ASSIGN_OR_RETURN(info.annotation, String(o, "annotation"));
  return t;
}

void PutU64(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out += static_cast<char>((v >> (8 * i)) & 0xFF);
}

uint64_t GetU64(std::string_view bytes) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= uint64_t{static_cast<uint8_t>(bytes[i])} << (8 * i);
  return v;
}

Status ExpectString(const RedisReply& reply, std::string_view command) {
  if (reply.type != RedisReply::Type::kString && !reply.is_nil()) {
    return Fail(ErrorCode::kCorrupt, "Redis answered {} with a reply of type {}", command,
                static_cast<int>(reply.type));
  }
  return {};
}

}  // namespace

std::string EncodeSharedTask(const SharedTask& t) {
  const TaskInfo& info = t.info;
  const TaskProgress& p = info.progress;
  Json o = {
      {"format", kTaskFormat},
      {"id", info.id},
      {"node", t.node},
      {"version", t.version},
      {"status", TaskStatusName(info.status)},
      {"file_names", info.file_names},
      {"documents", info.documents},
      {"options",
       {{"formula", info.options.formula},
        {"table", info.options.table},
        {"image_analysis",
         info.options.image_analysis ? Json(*info.options.image_analysis) : Json(nullptr)},
        {"start_page", info.options.start_page ? Json(*info.options.start_page) : Json(nullptr)},
        {"end_page", info.options.end_page ? Json(*info.options.end_page) : Json(nullptr)}}},
      {"created_at_ms", MillisSinceEpoch(info.created_at)},
      {"started_at_ms", OptionalMillis(info.started_at)},
      {"completed_at_ms", OptionalMillis(info.completed_at)},
      {"error", info.error ? Json(*info.error) : Json(nullptr)},
      {"queued_ahead", info.queued_ahead},
      {"progress",
       {{"documents_done", p.documents_done},
        {"documents_total", p.documents_total},
        {"pages_done", p.pages_done},
        {"pages_total", p.pages_total},
        {"blocks_done", p.blocks_done},
        {"generated_tokens", p.generated_tokens}}},
      {"cache_hits", info.cache_hits},
      {"near_duplicates", info.near_duplicates},
      {"annotation", info.annotation},
  };
  return DumpJson(o);
}

Result<SharedTask> DecodeSharedTask(std::string_view json) {
  auto parsed = ParseJson(json, kWhere);
  if (!parsed) return Corrupt(parsed.error());
  auto task = DecodeObject(*parsed);
  if (!task) return Corrupt(task.error());
  return task;
}

std::string SerializeTaskOutputs(const std::vector<DocumentOutputs>& outputs) {
  std::string out(kOutputsMagic);
  for (int i = 0; i < 4; ++i) out += static_cast<char>((kOutputsVersion >> (8 * i)) & 0xFF);
  PutU64(out, outputs.size());
  for (const DocumentOutputs& o : outputs) {
    const std::string one = SerializeDocumentOutputs(o);
    PutU64(out, one.size());
    out += one;
  }
  return out;
}

Result<std::vector<DocumentOutputs>> ParseTaskOutputs(std::string_view bytes) {
  if (bytes.size() < 16 || bytes.substr(0, 4) != kOutputsMagic) {
    return Fail(ErrorCode::kCorrupt, "shared task outputs: bad header");
  }
  uint32_t version = 0;
  for (int i = 0; i < 4; ++i) version |= uint32_t{static_cast<uint8_t>(bytes[4 + i])} << (8 * i);
  if (version != kOutputsVersion) {
    return Fail(ErrorCode::kCorrupt, "shared task outputs: version {} (this build reads {})",
                version, kOutputsVersion);
  }
  const uint64_t count = GetU64(bytes.substr(8));
  if (count > kMaxSharedTaskDocuments) {
    return Fail(ErrorCode::kCorrupt, "shared task outputs: {} documents", count);
  }
  std::string_view rest = bytes.substr(16);
  std::vector<DocumentOutputs> out;
  for (uint64_t d = 0; d < count; ++d) {
    if (rest.size() < 8) return Fail(ErrorCode::kCorrupt, "shared task outputs: truncated");
    const uint64_t size = GetU64(rest);
    rest.remove_prefix(8);
    if (size > rest.size()) {
      return Fail(ErrorCode::kCorrupt, "shared task outputs: document {} claims {} bytes, {} left",
                  d, size, rest.size());
    }
    MINERU_ASSIGN_OR_RETURN(DocumentOutputs one, ParseDocumentOutputs(rest.substr(0, size)));
    out.push_back(std::move(one));
    rest.remove_prefix(size);
  }
  if (!rest.empty()) {
    return Fail(ErrorCode::kCorrupt, "shared task outputs: {} bytes after the last document",
                rest.size());
  }
  return out;
}

TaskStore::TaskStore(TaskStoreOptions options)
    : options_(std::move(options)), client_(options_.redis) {}

Status TaskStore::Put(const std::vector<SharedTask>& tasks) {
  if (tasks.empty()) return {};
  std::vector<std::vector<std::string>> commands;
  const std::string ttl = std::to_string(options_.ttl.count());
  for (const SharedTask& t : tasks) {
    commands.push_back({"SETEX", TaskKey(t.info.id), ttl, EncodeSharedTask(t)});
  }
  MINERU_ASSIGN_OR_RETURN(auto replies, client_.Pipeline(std::move(commands)));
  (void)replies;
  return {};
}

Status TaskStore::PutOutputs(const std::string& id, const std::vector<DocumentOutputs>& outputs) {
  std::string value = SerializeTaskOutputs(outputs);
  if (value.size() > options_.max_outputs_bytes) {
    return Fail(ErrorCode::kResourceExhausted,
                "the outputs of task {} ({} bytes) exceed the shared value cap ({} bytes)", id,
                value.size(), options_.max_outputs_bytes);
  }
  MINERU_ASSIGN_OR_RETURN(
      RedisReply reply, client_.Command({"SETEX", OutputsKey(id),
                                         std::to_string(options_.ttl.count()), std::move(value)}));
  (void)reply;
  return {};
}

Status TaskStore::Forget(const std::string& id) {
  MINERU_ASSIGN_OR_RETURN(RedisReply reply, client_.Command({"DEL", TaskKey(id), OutputsKey(id)}));
  (void)reply;
  return {};
}

Result<std::vector<std::optional<SharedTask>>> TaskStore::Get(const std::vector<std::string>& ids) {
  std::vector<std::optional<SharedTask>> out;
  if (ids.empty()) return out;
  std::vector<std::string> argv = {"MGET"};
  for (const std::string& id : ids) argv.push_back(TaskKey(id));
  MINERU_ASSIGN_OR_RETURN(RedisReply reply, client_.Command(std::move(argv)));
  if (reply.type != RedisReply::Type::kArray || reply.elements.size() != ids.size()) {
    return Fail(ErrorCode::kCorrupt, "Redis answered MGET of {} keys with something else",
                ids.size());
  }
  for (size_t i = 0; i < ids.size(); ++i) {
    const RedisReply& value = reply.elements[i];
    MINERU_RETURN_IF_ERROR(ExpectString(value, "MGET"));
    if (value.is_nil()) {
      out.emplace_back();
      continue;
    }
    MINERU_ASSIGN_OR_RETURN(SharedTask task, DecodeSharedTask(value.str));
    if (task.info.id != ids[i]) {
      return Fail(ErrorCode::kCorrupt, "shared task {} holds task {}", ids[i], task.info.id);
    }
    out.push_back(std::move(task));
  }
  return out;
}

Result<std::vector<DocumentOutputs>> TaskStore::GetOutputs(const std::string& id) {
  // As RedisCache::Get: GETRANGE reads at most one byte more than the cap.
  MINERU_ASSIGN_OR_RETURN(RedisReply reply,
                          client_.Command({"GETRANGE", OutputsKey(id), "0",
                                           std::to_string(options_.max_outputs_bytes)}));
  MINERU_RETURN_IF_ERROR(ExpectString(reply, "GETRANGE"));
  if (reply.str.empty()) {
    return Fail(ErrorCode::kNotFound, "the outputs of task {} are not in the shared store", id);
  }
  if (reply.str.size() > options_.max_outputs_bytes) {
    return Fail(ErrorCode::kResourceExhausted,
                "the outputs of task {} exceed the shared value cap ({} bytes)", id,
                options_.max_outputs_bytes);
  }
  return ParseTaskOutputs(reply.str);
}

Status TaskStore::RenewLease(const std::string& node) {
  MINERU_ASSIGN_OR_RETURN(
      RedisReply reply,
      client_.Command({"SETEX", LeaseKey(node), std::to_string(kNodeLease.count()), "1"}));
  (void)reply;
  return {};
}

Status TaskStore::EndLease(const std::string& node) {
  MINERU_ASSIGN_OR_RETURN(RedisReply reply, client_.Command({"DEL", LeaseKey(node)}));
  (void)reply;
  return {};
}

Result<std::vector<bool>> TaskStore::Alive(const std::vector<std::string>& nodes) {
  std::vector<bool> out;
  if (nodes.empty()) return out;
  std::vector<std::string> argv = {"MGET"};
  for (const std::string& node : nodes) argv.push_back(LeaseKey(node));
  MINERU_ASSIGN_OR_RETURN(RedisReply reply, client_.Command(std::move(argv)));
  if (reply.type != RedisReply::Type::kArray || reply.elements.size() != nodes.size()) {
    return Fail(ErrorCode::kCorrupt, "Redis answered MGET of {} keys with something else",
                nodes.size());
  }
  for (const RedisReply& value : reply.elements) out.push_back(!value.is_nil());
  return out;
}

Status TaskStore::Request(const std::string& node, TaskRequest request, const std::string& id) {
  const std::string key = RequestsKey(node);
  const std::string entry =
      fmt::format("{} {}", request == TaskRequest::kCancel ? "cancel" : "delete", id);
  MINERU_ASSIGN_OR_RETURN(auto replies,
                          client_.Pipeline({{"RPUSH", key, entry},
                                            {"EXPIRE", key, std::to_string(kNodeLease.count())}}));
  (void)replies;
  return {};
}

Result<std::vector<std::pair<TaskRequest, std::string>>> TaskStore::TakeRequests(
    const std::string& node) {
  // LRANGE and LTRIM inside MULTI/EXEC: a request pushed meanwhile is neither lost nor taken
  // twice.
  const std::string key = RequestsKey(node);
  const std::string last = std::to_string(kMaxRequestsPerPoll - 1);
  MINERU_ASSIGN_OR_RETURN(
      auto replies, client_.Pipeline({{"MULTI"},
                                      {"LRANGE", key, "0", last},
                                      {"LTRIM", key, std::to_string(kMaxRequestsPerPoll), "-1"},
                                      {"EXEC"}}));
  std::vector<std::pair<TaskRequest, std::string>> out;
  if (replies.size() != 4 || replies[3].type != RedisReply::Type::kArray ||
      replies[3].elements.empty() || replies[3].elements[0].type != RedisReply::Type::kArray) {
    return Fail(ErrorCode::kCorrupt, "Redis answered MULTI/LRANGE/LTRIM/EXEC with something else");
  }
  for (const RedisReply& entry : replies[3].elements[0].elements) {
    std::string_view text = entry.str;
    TaskRequest request;
    if (text.starts_with("cancel ")) {
      request = TaskRequest::kCancel;
    } else if (text.starts_with("delete ")) {
      request = TaskRequest::kDelete;
    } else {
      continue;
    }
    std::string_view id = text.substr(7);
    if (LooksLikeTaskId(id)) out.emplace_back(request, std::string(id));
  }
  return out;
}

}  // namespace mineru::jobs
