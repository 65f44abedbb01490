// SPDX-License-Identifier: Apache-2.0
#include "model/safetensors.h"

#include <algorithm>
#include <limits>
#include <string_view>

namespace mineru::model {

int64_t TensorInfo::NumElements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

namespace {

Result<TensorInfo> ParseEntry(const std::string& name, const Json& entry, uint64_t data_start,
                              uint64_t data_size, const std::string& path) {
  const std::string where = path + ": tensor '" + name + "'";
  if (!entry.is_object()) return Fail(ErrorCode::kCorrupt, "{}: entry is not an object", where);
  TensorInfo info;
  info.name = name;
  MINERU_ASSIGN_OR_RETURN(auto dtype_name, FindString(entry, "dtype", where));
  if (!dtype_name) return Fail(ErrorCode::kCorrupt, "{}: no 'dtype'", where);
  const auto dtype = DTypeFromName(*dtype_name);
  if (!dtype) return Fail(ErrorCode::kUnsupported, "{}: unknown dtype '{}'", where, *dtype_name);
  info.dtype = *dtype;
  MINERU_ASSIGN_OR_RETURN(auto shape, FindIntArray(entry, "shape", where));
  if (!shape) return Fail(ErrorCode::kCorrupt, "{}: no 'shape'", where);
  uint64_t elements = 1;
  for (int64_t d : *shape) {
    if (d < 0) return Fail(ErrorCode::kCorrupt, "{}: negative dimension {}", where, d);
    if (d != 0 && elements > std::numeric_limits<uint64_t>::max() / 16 / static_cast<uint64_t>(d)) {
      return Fail(ErrorCode::kCorrupt, "{}: shape overflows", where);
    }
    elements *= static_cast<uint64_t>(d);
  }
  info.shape = *shape;
  MINERU_ASSIGN_OR_RETURN(auto offsets, FindIntArray(entry, "data_offsets", where));
  if (!offsets || offsets->size() != 2) {
    return Fail(ErrorCode::kCorrupt, "{}: 'data_offsets' must be [begin, end]", where);
  }
  const int64_t begin = (*offsets)[0], end = (*offsets)[1];
  if (begin < 0 || end < begin) {
    return Fail(ErrorCode::kCorrupt, "{}: data_offsets [{}, {}] are not an interval", where, begin,
                end);
  }
  if (static_cast<uint64_t>(end) > data_size) {
    return Fail(ErrorCode::kCorrupt,
                "{}: data_offsets end {} is past the end of the data ({} bytes; file truncated?)",
                where, end, data_size);
  }
  info.bytes = static_cast<uint64_t>(end - begin);
  if (info.bytes != elements * DTypeSize(info.dtype)) {
    return Fail(ErrorCode::kCorrupt, "{}: {} bytes of data, but shape and dtype need {}", where,
                info.bytes, elements * DTypeSize(info.dtype));
  }
  info.offset = data_start + static_cast<uint64_t>(begin);
  return info;
}

}  // namespace

Result<SafetensorsFile> SafetensorsFile::Open(const std::string& path, uint64_t max_header_bytes,
                                              int max_json_depth) {
  SafetensorsFile result;
  MINERU_ASSIGN_OR_RETURN(result.file_, MappedFile::Open(path));
  const std::span<const uint8_t> bytes = result.file_.bytes();
  if (bytes.size() < 8) {
    return Fail(ErrorCode::kCorrupt, "{}: {} bytes is too short for a safetensors file", path,
                bytes.size());
  }
  uint64_t header_len = 0;
  for (int i = 7; i >= 0; --i) header_len = (header_len << 8) | bytes[static_cast<size_t>(i)];
  if (header_len > max_header_bytes) {
    return Fail(ErrorCode::kResourceExhausted, "{}: header of {} bytes is over the limit of {}",
                path, header_len, max_header_bytes);
  }
  if (header_len > bytes.size() - 8) {
    return Fail(ErrorCode::kCorrupt,
                "{}: header of {} bytes runs past the end of the file ({} bytes; truncated?)", path,
                header_len, bytes.size());
  }
  const std::string_view header(reinterpret_cast<const char*>(bytes.data() + 8), header_len);
  if (header.empty() || header[0] != '{') {
    return Fail(ErrorCode::kCorrupt, "{}: header is not a JSON object", path);
  }
  // Duplicate names are an error in the format; nlohmann would silently keep the last one.
  std::string duplicate;
  auto parsed = ParseJson(header, "header", JsonFileLimits(max_json_depth), &duplicate);
  if (!parsed) {
    if (parsed.error().code != ErrorCode::kCorrupt) {
      return tl::unexpected(WithContext(parsed.error(), path));  // a limit, named
    }
    constexpr std::string_view kSyntax = "header: invalid JSON: ";
    std::string_view detail = parsed.error().message;
    if (detail.starts_with(kSyntax)) detail.remove_prefix(kSyntax.size());
    return Fail(ErrorCode::kCorrupt, "{}: header is not valid JSON: {}", path, detail);
  }
  const Json json = std::move(*parsed);
  if (!json.is_object()) return Fail(ErrorCode::kCorrupt, "{}: header is not a JSON object", path);
  if (!duplicate.empty()) {
    return Fail(ErrorCode::kCorrupt, "{}: tensor '{}' appears twice in the header", path,
                duplicate);
  }
  const uint64_t data_start = 8 + header_len;
  const uint64_t data_size = bytes.size() - data_start;
  for (const auto& [name, entry] : json.items()) {
    if (name == "__metadata__") {
      if (!entry.is_object()) {
        return Fail(ErrorCode::kCorrupt, "{}: '__metadata__' must be an object", path);
      }
      for (const auto& [key, value] : entry.items()) {
        if (!value.is_string()) {
          return Fail(ErrorCode::kCorrupt, "{}: metadata '{}' must be a string", path, key);
        }
        result.metadata_[key] = value.get<std::string>();
      }
      continue;
    }
    MINERU_ASSIGN_OR_RETURN(TensorInfo info, ParseEntry(name, entry, data_start, data_size, path));
    result.tensors_.push_back(std::move(info));
  }
  // Offsets sorted must tile the data exactly: no overlap, no hole, nothing left over.
  std::vector<const TensorInfo*> by_offset;
  for (const TensorInfo& t : result.tensors_) by_offset.push_back(&t);
  std::sort(by_offset.begin(), by_offset.end(), [](const TensorInfo* a, const TensorInfo* b) {
    return a->offset != b->offset ? a->offset < b->offset : a->bytes < b->bytes;
  });
  uint64_t expected = data_start;
  const TensorInfo* previous = nullptr;
  for (const TensorInfo* t : by_offset) {
    if (t->offset < expected) {
      return Fail(ErrorCode::kCorrupt, "{}: tensors '{}' and '{}' overlap", path,
                  previous ? previous->name : "", t->name);
    }
    if (t->offset > expected) {
      return Fail(ErrorCode::kCorrupt, "{}: {} unused bytes before tensor '{}'", path,
                  t->offset - expected, t->name);
    }
    expected = t->offset + t->bytes;
    previous = t;
  }
  if (expected != bytes.size()) {
    return Fail(ErrorCode::kCorrupt, "{}: {} bytes after the last tensor are not described", path,
                bytes.size() - expected);
  }
  return result;
}

std::string SafetensorsHeader(std::span<const TensorToWrite> tensors,
                              const std::map<std::string, std::string>& metadata) {
  // Keys in file order: nlohmann's ordered_json keeps insertion order.
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  uint64_t offset = 0;
  for (const TensorToWrite& t : tensors) {
    const uint64_t size = t.data.size();
    header[t.name] = {{"dtype", std::string(DTypeName(t.dtype))},
                      {"shape", t.shape},
                      {"data_offsets", {offset, offset + size}}};
    offset += size;
  }
  std::string text = header.dump();
  while (text.size() % 8 != 0) text.push_back(' ');
  return text;
}

}  // namespace mineru::model
