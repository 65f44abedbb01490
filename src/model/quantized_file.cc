// SPDX-License-Identifier: Apache-2.0
#include "model/quantized_file.h"

#include <algorithm>
#include <cstring>

#include "base/json.h"

namespace mineru::model {
namespace {

constexpr char kMagic[8] = {'M', 'I', 'N', 'E', 'R', 'U', 'Q', '8'};
constexpr char kLayout[] = "q8-panels-16";
constexpr int64_t kPrefixBytes = 16;

void PutU64(std::vector<uint8_t>& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

}  // namespace

Result<QuantizedFile> QuantizedFile::Open(const std::string& path, std::string_view fingerprint,
                                          const CheckpointLimits& limits) {
  QuantizedFile q;
  MINERU_ASSIGN_OR_RETURN(q.file_, MappedFile::Open(path));
  const std::span<const uint8_t> bytes = q.file_.bytes();
  if (bytes.size() < kPrefixBytes || std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0) {
    return Fail(ErrorCode::kCorrupt, "{}: not a quantized weights file (no MINERUQ8 magic)", path);
  }
  uint64_t header = 0;
  for (int i = 0; i < 8; ++i) header |= uint64_t{bytes[8 + i]} << (8 * i);
  if (header > static_cast<uint64_t>(limits.max_json_bytes)) {
    return Fail(ErrorCode::kResourceExhausted,
                "{}: header of {} bytes is over the limit of {} (--max-json-bytes)", path, header,
                limits.max_json_bytes);
  }
  if (header > bytes.size() - kPrefixBytes) {
    return Fail(ErrorCode::kCorrupt, "{}: header of {} bytes runs past the end of the file", path,
                header);
  }
  const std::string_view text(reinterpret_cast<const char*>(bytes.data()) + kPrefixBytes,
                              static_cast<size_t>(header));
  MINERU_ASSIGN_OR_RETURN(Json json, ParseJson(text, path, JsonFileLimits(limits.max_json_depth)));
  if (!json.is_object()) return Fail(ErrorCode::kCorrupt, "{}: header is not a JSON object", path);
  MINERU_ASSIGN_OR_RETURN(auto format, FindInt(json, "format", path));
  MINERU_ASSIGN_OR_RETURN(auto group, FindInt(json, "group", path));
  MINERU_ASSIGN_OR_RETURN(auto layout, FindString(json, "layout", path));
  MINERU_ASSIGN_OR_RETURN(auto print, FindString(json, "fingerprint", path));
  if (format != kQuantizedFormat || group != ops::kQ8Group || layout != kLayout) {
    return Fail(ErrorCode::kCorrupt,
                "{}: format {}, group {}, layout '{}' (this build reads format {}, group {}, "
                "layout '{}')",
                path, format.value_or(-1), group.value_or(-1), layout.value_or(""),
                kQuantizedFormat, ops::kQ8Group, kLayout);
  }
  if (print != fingerprint) {
    return Fail(ErrorCode::kInvalidArgument,
                "{} was written for checkpoint {}, not this one ({}): run `mineru-cpp quantize` "
                "again",
                path, print.value_or("?"), fingerprint);
  }
  const auto tensors = json.find("tensors");
  if (tensors == json.end() || !tensors->is_object()) {
    return Fail(ErrorCode::kCorrupt, "{}: 'tensors' must be an object", path);
  }
  std::vector<std::pair<int64_t, int64_t>> ranges;
  for (const auto& [name, entry] : tensors->items()) {
    const std::string where = path + ": tensor '" + name + "'";
    if (!entry.is_object()) return Fail(ErrorCode::kCorrupt, "{} is not an object", where);
    Entry e{};
    for (auto [key, field] : {std::pair{"rows", &e.rows}, std::pair{"cols", &e.cols},
                              std::pair{"offset", &e.offset}, std::pair{"bytes", &e.bytes}}) {
      MINERU_ASSIGN_OR_RETURN(auto value, FindInt(entry, key, where));
      if (!value || *value < 0) {
        return Fail(ErrorCode::kCorrupt, "{}: '{}' must be a non-negative integer", where, key);
      }
      *field = *value;
    }
    if (ops::Q8Matrix::BytesFor(e.rows, e.cols) != e.bytes) {
      return Fail(ErrorCode::kCorrupt, "{}: {} bytes for [{}, {}] (the layout takes {})", where,
                  e.bytes, e.rows, e.cols, ops::Q8Matrix::BytesFor(e.rows, e.cols));
    }
    if (e.offset % kQuantizedAlign != 0 || e.offset < kPrefixBytes ||
        e.bytes > static_cast<int64_t>(bytes.size()) ||
        e.offset > static_cast<int64_t>(bytes.size()) - e.bytes) {
      return Fail(ErrorCode::kCorrupt, "{}: [{}, +{}) is not an aligned range of the {}-byte file",
                  where, e.offset, e.bytes, bytes.size());
    }
    ranges.emplace_back(e.offset, e.offset + e.bytes);
    q.entries_.emplace(name, e);
  }
  std::sort(ranges.begin(), ranges.end());
  const int64_t data_start = kPrefixBytes + static_cast<int64_t>(header);
  for (size_t i = 0; i < ranges.size(); ++i) {
    const int64_t previous_end = i == 0 ? data_start : ranges[i - 1].second;
    if (ranges[i].first < previous_end) {
      return Fail(ErrorCode::kCorrupt,
                  "{}: tensor bytes at {} overlap the header or another tensor", path,
                  ranges[i].first);
    }
  }
  return q;
}

Result<ops::Q8Matrix> QuantizedFile::View(const std::string& name, int64_t rows,
                                          int64_t cols) const {
  const auto it = entries_.find(name);
  if (it == entries_.end()) {
    return Fail(ErrorCode::kNotFound, "{} has no tensor '{}'", path(), name);
  }
  const Entry& e = it->second;
  if (e.rows != rows || e.cols != cols) {
    return Fail(ErrorCode::kCorrupt, "{}: tensor '{}' is [{}, {}], the checkpoint's is [{}, {}]",
                path(), name, e.rows, e.cols, rows, cols);
  }
  return ops::Q8Matrix::View(
      file_.bytes().subspan(static_cast<size_t>(e.offset), static_cast<size_t>(e.bytes)), rows,
      cols);
}

Status WriteQuantizedFile(
    const std::string& path, std::string_view fingerprint,
    const std::vector<std::pair<std::string, const ops::Q8Matrix*>>& tensors) {
  // Offsets depend on the header's length, which depends on the offsets' digits: lay out with a
  // generous header allowance, then pad the header text to it.
  Json header{{"format", kQuantizedFormat},
              {"group", ops::kQ8Group},
              {"layout", kLayout},
              {"fingerprint", std::string(fingerprint)},
              {"tensors", Json::object()}};
  const int64_t allowance = 256 + 160 * static_cast<int64_t>(tensors.size());
  auto align = [](int64_t v) {
    return (v + kQuantizedAlign - 1) / kQuantizedAlign * kQuantizedAlign;
  };
  int64_t offset = align(kPrefixBytes + allowance);
  for (const auto& [name, q8] : tensors) {
    header["tensors"][name] = {
        {"rows", q8->rows()}, {"cols", q8->cols()}, {"offset", offset}, {"bytes", q8->bytes()}};
    offset = align(offset + q8->bytes());
  }
  std::string text = DumpJson(header);
  if (static_cast<int64_t>(text.size()) > allowance) {
    return Fail(ErrorCode::kInternal, "quantized file header of {} bytes exceeds its {} allowance",
                text.size(), allowance);
  }
  text.append(static_cast<size_t>(allowance) - text.size(), ' ');  // JSON allows trailing spaces
  std::vector<uint8_t> prefix(kMagic, kMagic + sizeof(kMagic));
  PutU64(prefix, text.size());
  prefix.insert(prefix.end(), text.begin(), text.end());
  MINERU_ASSIGN_OR_RETURN(AtomicFileWriter writer, AtomicFileWriter::Create(path));
  MINERU_RETURN_IF_ERROR(writer.Write(prefix));
  int64_t written = static_cast<int64_t>(prefix.size());
  const std::vector<uint8_t> zeros(static_cast<size_t>(kQuantizedAlign), 0);
  auto pad_to = [&](int64_t target) -> Status {
    while (written < target) {
      const int64_t n = std::min<int64_t>(target - written, kQuantizedAlign);
      MINERU_RETURN_IF_ERROR(writer.Write(std::span(zeros.data(), static_cast<size_t>(n))));
      written += n;
    }
    return {};
  };
  for (const auto& [name, q8] : tensors) {
    MINERU_RETURN_IF_ERROR(pad_to(header["tensors"][name]["offset"].get<int64_t>()));
    MINERU_RETURN_IF_ERROR(writer.Write(std::span(q8->data(), static_cast<size_t>(q8->bytes()))));
    written += q8->bytes();
  }
  MINERU_RETURN_IF_ERROR(pad_to(align(written)));
  return writer.Commit();
}

}  // namespace mineru::model
