// SPDX-License-Identifier: Apache-2.0
#include "model/weights_file.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "base/json.h"

namespace mineru::model {
namespace {

constexpr int64_t kPrefixBytes = 16;

// What tells the kinds apart: everything else (prefix, header, alignment, validation, writing)
// is shared.
struct KindSpec {
  char magic[8];
  const char* layout;
  // Header integers a reader must find equal to this build's; the layout's bytes depend on them
  // (depth_block does not change the panels' bytes today, but it is part of the arithmetic
  // contract a file is packed for, so another value is refused rather than reinterpreted).
  std::vector<std::pair<const char*, int64_t>> params;
  // The element type recorded per tensor ("dtype"); int8 files record none (kI8 implied).
  bool dtype_per_tensor;
};

const KindSpec& Spec(WeightsFileKind kind) {
  static const KindSpec kInt8{
      {'M', 'I', 'N', 'E', 'R', 'U', 'Q', '8'}, "q8-panels-16", {{"group", ops::kQ8Group}}, false};
  static const KindSpec kPanels{
      {'M', 'I', 'N', 'E', 'R', 'U', 'P', 'K'},
      "panels-32",
      {{"panel_cols", ops::kPanelCols}, {"depth_block", ops::kPackedDepthBlock}},
      true};
  return kind == WeightsFileKind::kInt8 ? kInt8 : kPanels;
}

WeightsFileKind Other(WeightsFileKind kind) {
  return kind == WeightsFileKind::kInt8 ? WeightsFileKind::kPanels : WeightsFileKind::kInt8;
}

// Size of tensor [rows, cols] of `dtype` in the kind's layout; -1 when it has none (overflow,
// or a dtype the kind does not store).
int64_t BytesFor(WeightsFileKind kind, int64_t rows, int64_t cols, DType dtype) {
  if (kind == WeightsFileKind::kInt8) {
    return dtype == DType::kI8 ? ops::Q8Matrix::BytesFor(rows, cols) : -1;
  }
  return ops::PackedMatrix::PanelsBytesFor(rows, cols, dtype);
}

void PutU64(std::vector<uint8_t>& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

}  // namespace

const char* WeightsFileName(WeightsFileKind kind) {
  return kind == WeightsFileKind::kInt8 ? kQuantizedFileName : kPackedFileName;
}

std::string_view WeightsFileKindName(WeightsFileKind kind) {
  return kind == WeightsFileKind::kInt8 ? "int8 weights" : "packed panels";
}

std::string_view WeightsFileCommand(WeightsFileKind kind) {
  return kind == WeightsFileKind::kInt8 ? "quantize" : "pack";
}

Result<WeightsFile> WeightsFile::Open(const std::string& path, WeightsFileKind kind,
                                      std::string_view fingerprint,
                                      const CheckpointLimits& limits) {
  const KindSpec& spec = Spec(kind);
  WeightsFile q;
  q.kind_ = kind;
  MINERU_ASSIGN_OR_RETURN(q.file_, MappedFile::Open(path));
  const std::span<const uint8_t> bytes = q.file_.bytes();
  const std::string_view magic(spec.magic, sizeof(spec.magic));
  if (bytes.size() >= kPrefixBytes &&
      std::memcmp(bytes.data(), Spec(Other(kind)).magic, sizeof(spec.magic)) == 0) {
    return Fail(ErrorCode::kInvalidArgument,
                "{} holds {} (written by `mineru-cpp {}`), not {} (written by `mineru-cpp {}`)",
                path, WeightsFileKindName(Other(kind)), WeightsFileCommand(Other(kind)),
                WeightsFileKindName(kind), WeightsFileCommand(kind));
  }
  if (bytes.size() < kPrefixBytes || std::memcmp(bytes.data(), spec.magic, magic.size()) != 0) {
    return Fail(ErrorCode::kCorrupt, "{}: not a file of {} (no {} magic)", path,
                WeightsFileKindName(kind), magic);
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
  MINERU_ASSIGN_OR_RETURN(auto layout, FindString(json, "layout", path));
  MINERU_ASSIGN_OR_RETURN(auto print, FindString(json, "fingerprint", path));
  bool same = format == kWeightsFileFormat && layout == spec.layout;
  std::string found = fmt::format("format {}", format.value_or(-1));
  std::string wanted = fmt::format("format {}", kWeightsFileFormat);
  for (const auto& [key, value] : spec.params) {
    MINERU_ASSIGN_OR_RETURN(auto got, FindInt(json, key, path));
    same = same && got == value;
    found += fmt::format(", {} {}", key, got.value_or(-1));
    wanted += fmt::format(", {} {}", key, value);
  }
  if (!same) {
    return Fail(ErrorCode::kCorrupt, "{}: {}, layout '{}' (this build reads {}, layout '{}')", path,
                found, layout.value_or(""), wanted, spec.layout);
  }
  if (print != fingerprint) {
    return Fail(ErrorCode::kInvalidArgument,
                "{} was written for checkpoint {}, not this one ({}): run `mineru-cpp {}` again",
                path, print.value_or("?"), fingerprint, WeightsFileCommand(kind));
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
    e.dtype = DType::kI8;
    if (spec.dtype_per_tensor) {
      MINERU_ASSIGN_OR_RETURN(auto dtype, FindString(entry, "dtype", where));
      const auto parsed = dtype ? DTypeFromName(*dtype) : std::nullopt;
      if (!parsed || (*parsed != DType::kBF16 && *parsed != DType::kF32)) {
        return Fail(ErrorCode::kCorrupt, "{}: 'dtype' must be \"BF16\" or \"F32\", not '{}'", where,
                    dtype.value_or(""));
      }
      e.dtype = *parsed;
    }
    const int64_t want = BytesFor(kind, e.rows, e.cols, e.dtype);
    if (want < 0 || want != e.bytes) {
      return Fail(ErrorCode::kCorrupt, "{}: {} bytes for [{}, {}] (the layout takes {})", where,
                  e.bytes, e.rows, e.cols, want);
    }
    if (e.offset % kWeightsFileAlign != 0 || e.offset < kPrefixBytes ||
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

Result<ops::PackedMatrix> WeightsFile::View(const std::string& name, int64_t rows, int64_t cols,
                                            DType dtype) const {
  const auto it = entries_.find(name);
  if (it == entries_.end()) {
    return Fail(ErrorCode::kNotFound, "{} has no tensor '{}'", path(), name);
  }
  const Entry& e = it->second;
  if (e.rows != rows || e.cols != cols) {
    return Fail(ErrorCode::kCorrupt, "{}: tensor '{}' is [{}, {}], the checkpoint's is [{}, {}]",
                path(), name, e.rows, e.cols, rows, cols);
  }
  if (e.dtype != dtype) {
    return Fail(ErrorCode::kCorrupt,
                "{}: tensor '{}' holds {} panels, the checkpoint's weights pack to {} panels",
                path(), name, DTypeName(e.dtype), DTypeName(dtype));
  }
  const auto span =
      file_.bytes().subspan(static_cast<size_t>(e.offset), static_cast<size_t>(e.bytes));
  if (kind_ == WeightsFileKind::kInt8) {
    MINERU_ASSIGN_OR_RETURN(ops::Q8Matrix q8, ops::Q8Matrix::View(span, rows, cols));
    return ops::PackedMatrix::Q8(std::move(q8));
  }
  return ops::PackedMatrix::PanelsView(span, rows, cols, dtype);
}

Status WriteWeightsFile(
    const std::string& path, WeightsFileKind kind, std::string_view fingerprint,
    const std::vector<std::pair<std::string, const ops::PackedMatrix*>>& tensors) {
  const KindSpec& spec = Spec(kind);
  const ops::WeightLayout layout =
      kind == WeightsFileKind::kInt8 ? ops::WeightLayout::kQ8 : ops::WeightLayout::kPanels;
  // Offsets depend on the header's length, which depends on the offsets' digits: lay out with a
  // generous header allowance, then pad the header text to it. (The int8 file's allowance and
  // keys are those of its first release, so it stays byte-identical.)
  Json header{{"format", kWeightsFileFormat},
              {"layout", spec.layout},
              {"fingerprint", std::string(fingerprint)},
              {"tensors", Json::object()}};
  for (const auto& [key, value] : spec.params) header[key] = value;
  const int64_t per_tensor = spec.dtype_per_tensor ? 192 : 160;
  const int64_t allowance = 256 + per_tensor * static_cast<int64_t>(tensors.size());
  auto align = [](int64_t v) {
    return (v + kWeightsFileAlign - 1) / kWeightsFileAlign * kWeightsFileAlign;
  };
  int64_t offset = align(kPrefixBytes + allowance);
  for (const auto& [name, m] : tensors) {
    if (m->layout() != layout) {
      return Fail(ErrorCode::kInvalidArgument, "matrix '{}' is not in the {} file's layout", name,
                  WeightsFileKindName(kind));
    }
    Json entry{{"rows", m->rows()}, {"cols", m->cols()}, {"offset", offset}, {"bytes", m->bytes()}};
    if (spec.dtype_per_tensor) entry["dtype"] = std::string(DTypeName(m->dtype()));
    header["tensors"][name] = std::move(entry);
    offset = align(offset + m->bytes());
  }
  std::string text = DumpJson(header);
  if (static_cast<int64_t>(text.size()) > allowance) {
    return Fail(ErrorCode::kInternal, "{} file header of {} bytes exceeds its {} allowance",
                WeightsFileKindName(kind), text.size(), allowance);
  }
  text.append(static_cast<size_t>(allowance) - text.size(), ' ');  // JSON allows trailing spaces
  std::vector<uint8_t> prefix(spec.magic, spec.magic + sizeof(spec.magic));
  PutU64(prefix, text.size());
  prefix.insert(prefix.end(), text.begin(), text.end());
  MINERU_ASSIGN_OR_RETURN(AtomicFileWriter writer, AtomicFileWriter::Create(path));
  MINERU_RETURN_IF_ERROR(writer.Write(prefix));
  int64_t written = static_cast<int64_t>(prefix.size());
  const std::vector<uint8_t> zeros(static_cast<size_t>(kWeightsFileAlign), 0);
  auto pad_to = [&](int64_t target) -> Status {
    while (written < target) {
      const int64_t n = std::min<int64_t>(target - written, kWeightsFileAlign);
      MINERU_RETURN_IF_ERROR(writer.Write(std::span(zeros.data(), static_cast<size_t>(n))));
      written += n;
    }
    return {};
  };
  for (const auto& [name, m] : tensors) {
    MINERU_RETURN_IF_ERROR(pad_to(header["tensors"][name]["offset"].get<int64_t>()));
    MINERU_RETURN_IF_ERROR(writer.Write(std::span(m->data(), static_cast<size_t>(m->bytes()))));
    written += m->bytes();
  }
  MINERU_RETURN_IF_ERROR(pad_to(align(written)));
  return writer.Commit();
}

}  // namespace mineru::model
