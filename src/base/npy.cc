// SPDX-License-Identifier: Apache-2.0
#include "base/npy.h"

#include <cstring>
#include <limits>
#include <optional>
#include <string_view>

#include "base/mapped_file.h"

namespace mineru {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;
// A header dictionary longer than this is not a real .npy header.
constexpr size_t kMaxHeaderBytes = 1 << 16;
constexpr size_t kMaxDims = 16;

std::optional<DType> DTypeFromDescr(std::string_view descr) {
  if (descr.size() < 3) return std::nullopt;
  const char order = descr[0];
  const std::string_view kind = descr.substr(1);
  const bool single_byte = kind == "u1" || kind == "i1" || kind == "b1";
  if (order == '>' && !single_byte) return std::nullopt;  // big-endian: not supported
  if (order != '<' && order != '|' && order != '=' && order != '>') return std::nullopt;
  if (kind == "f4") return DType::kF32;
  if (kind == "f8") return DType::kF64;
  if (kind == "f2") return DType::kF16;
  if (kind == "i8") return DType::kI64;
  if (kind == "i4") return DType::kI32;
  if (kind == "i2") return DType::kI16;
  if (kind == "i1") return DType::kI8;
  if (kind == "u8") return DType::kU64;
  if (kind == "u4") return DType::kU32;
  if (kind == "u2") return DType::kU16;
  if (kind == "u1") return DType::kU8;
  if (kind == "b1") return DType::kBool;
  return std::nullopt;
}

const char* DescrFromDType(DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return "<f4";
    case DType::kF64:
      return "<f8";
    case DType::kF16:
      return "<f2";
    case DType::kI64:
      return "<i8";
    case DType::kI32:
      return "<i4";
    case DType::kI16:
      return "<i2";
    case DType::kI8:
      return "|i1";
    case DType::kU64:
      return "<u8";
    case DType::kU32:
      return "<u4";
    case DType::kU16:
      return "<u2";
    case DType::kU8:
      return "|u1";
    case DType::kBool:
      return "|b1";
    case DType::kBF16:
      return nullptr;  // NumPy has no bfloat16
  }
  return nullptr;
}

// Finds the value text after 'key': in the header dictionary.
std::optional<std::string_view> FindValue(std::string_view header, std::string_view key) {
  std::string quoted;
  quoted.reserve(key.size() + 2);
  quoted.push_back('\'');
  quoted.append(key);
  quoted.push_back('\'');
  size_t at = header.find(quoted);
  if (at == std::string_view::npos) return std::nullopt;
  at = header.find(':', at + quoted.size());
  if (at == std::string_view::npos) return std::nullopt;
  ++at;
  while (at < header.size() && header[at] == ' ') ++at;
  return header.substr(at);
}

}  // namespace

int64_t NpyArray::NumElements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::string NpyArray::ShapeString() const {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

Result<std::vector<float>> NpyArray::ToF32() const {
  const size_t n = static_cast<size_t>(NumElements());
  std::vector<float> out(n);
  const uint8_t* p = bytes.data();
  switch (dtype) {
    case DType::kF32:
      std::memcpy(out.data(), p, n * 4);
      return out;
    case DType::kF64:
      for (size_t i = 0; i < n; ++i) {
        double v;
        std::memcpy(&v, p + 8 * i, 8);
        out[i] = static_cast<float>(v);
      }
      return out;
    case DType::kF16:
      for (size_t i = 0; i < n; ++i) {
        uint16_t v;
        std::memcpy(&v, p + 2 * i, 2);
        out[i] = F16ToF32(v);
      }
      return out;
    default:
      return Fail(ErrorCode::kInvalidArgument, "expected a float array, got {}", DTypeName(dtype));
  }
}

Result<std::vector<int64_t>> NpyArray::ToI64() const {
  const size_t n = static_cast<size_t>(NumElements());
  std::vector<int64_t> out(n);
  const uint8_t* p = bytes.data();
  for (size_t i = 0; i < n; ++i) {
    switch (dtype) {
      case DType::kI64:
      case DType::kU64: {
        int64_t v;
        std::memcpy(&v, p + 8 * i, 8);
        out[i] = v;
        break;
      }
      case DType::kI32: {
        int32_t v;
        std::memcpy(&v, p + 4 * i, 4);
        out[i] = v;
        break;
      }
      case DType::kU32: {
        uint32_t v;
        std::memcpy(&v, p + 4 * i, 4);
        out[i] = v;
        break;
      }
      case DType::kI16: {
        int16_t v;
        std::memcpy(&v, p + 2 * i, 2);
        out[i] = v;
        break;
      }
      case DType::kU16: {
        uint16_t v;
        std::memcpy(&v, p + 2 * i, 2);
        out[i] = v;
        break;
      }
      case DType::kI8:
        out[i] = static_cast<int8_t>(p[i]);
        break;
      case DType::kU8:
      case DType::kBool:
        out[i] = p[i];
        break;
      default:
        return Fail(ErrorCode::kInvalidArgument, "expected an integer array, got {}",
                    DTypeName(dtype));
    }
  }
  return out;
}

Result<NpyArray> ParseNpy(std::span<const uint8_t> file, const std::string& name) {
  if (file.size() < kMagicSize + 4 || std::memcmp(file.data(), kMagic, kMagicSize) != 0) {
    return Fail(ErrorCode::kCorrupt, "{}: not a .npy file (bad magic)", name);
  }
  const uint8_t major = file[6];
  size_t header_len = 0;
  size_t header_start = 0;
  if (major == 1) {
    header_len = file[8] | (size_t{file[9]} << 8);
    header_start = 10;
  } else if (major == 2 || major == 3) {
    if (file.size() < 12) return Fail(ErrorCode::kCorrupt, "{}: truncated header", name);
    header_len =
        file[8] | (size_t{file[9]} << 8) | (size_t{file[10]} << 16) | (size_t{file[11]} << 24);
    header_start = 12;
  } else {
    return Fail(ErrorCode::kUnsupported, "{}: .npy format version {} not supported", name, major);
  }
  if (header_len > kMaxHeaderBytes || header_start + header_len > file.size()) {
    return Fail(ErrorCode::kCorrupt, "{}: header of {} bytes runs past the end of the file", name,
                header_len);
  }
  const std::string_view header(reinterpret_cast<const char*>(file.data() + header_start),
                                header_len);
  NpyArray array;
  const auto descr_value = FindValue(header, "descr");
  if (!descr_value || descr_value->empty() || (*descr_value)[0] != '\'') {
    return Fail(ErrorCode::kCorrupt, "{}: header has no 'descr'", name);
  }
  const size_t descr_end = descr_value->find('\'', 1);
  if (descr_end == std::string_view::npos) {
    return Fail(ErrorCode::kCorrupt, "{}: unterminated 'descr'", name);
  }
  const std::string_view descr = descr_value->substr(1, descr_end - 1);
  const auto dtype = DTypeFromDescr(descr);
  if (!dtype) return Fail(ErrorCode::kUnsupported, "{}: dtype '{}' not supported", name, descr);
  array.dtype = *dtype;
  const auto fortran = FindValue(header, "fortran_order");
  if (!fortran) return Fail(ErrorCode::kCorrupt, "{}: header has no 'fortran_order'", name);
  if (fortran->substr(0, 4) == "True") {
    return Fail(ErrorCode::kUnsupported, "{}: Fortran-order arrays not supported", name);
  }
  const auto shape_value = FindValue(header, "shape");
  if (!shape_value || shape_value->empty() || (*shape_value)[0] != '(') {
    return Fail(ErrorCode::kCorrupt, "{}: header has no 'shape'", name);
  }
  const size_t shape_end = shape_value->find(')');
  if (shape_end == std::string_view::npos) {
    return Fail(ErrorCode::kCorrupt, "{}: unterminated 'shape'", name);
  }
  std::string_view dims = shape_value->substr(1, shape_end - 1);
  uint64_t count = 1;
  while (!dims.empty()) {
    while (!dims.empty() && (dims[0] == ' ' || dims[0] == ',')) dims.remove_prefix(1);
    if (dims.empty()) break;
    uint64_t d = 0;
    size_t used = 0;
    while (used < dims.size() && dims[used] >= '0' && dims[used] <= '9') {
      d = d * 10 + static_cast<uint64_t>(dims[used] - '0');
      if (d > (uint64_t{1} << 40))
        return Fail(ErrorCode::kCorrupt, "{}: dimension too large", name);
      ++used;
    }
    if (used == 0) return Fail(ErrorCode::kCorrupt, "{}: bad shape '{}'", name, dims);
    dims.remove_prefix(used);
    if (array.shape.size() == kMaxDims) return Fail(ErrorCode::kCorrupt, "{}: too many dims", name);
    array.shape.push_back(static_cast<int64_t>(d));
    if (d != 0 && count > std::numeric_limits<uint64_t>::max() / d / 8) {
      return Fail(ErrorCode::kCorrupt, "{}: shape overflows", name);
    }
    count *= d;
  }
  const uint64_t data_bytes = count * DTypeSize(array.dtype);
  const size_t data_start = header_start + header_len;
  if (file.size() - data_start != data_bytes) {
    return Fail(ErrorCode::kCorrupt, "{}: shape {} needs {} data bytes, file has {}", name,
                array.ShapeString(), data_bytes, file.size() - data_start);
  }
  array.bytes.assign(file.begin() + static_cast<ptrdiff_t>(data_start), file.end());
  return array;
}

Result<NpyArray> ReadNpy(const std::string& path, uint64_t max_bytes) {
  MINERU_ASSIGN_OR_RETURN(MappedFile file, MappedFile::Open(path));
  if (file.size() > max_bytes) {
    return Fail(ErrorCode::kResourceExhausted, "{}: {} bytes is over the .npy limit of {} bytes",
                path, file.size(), max_bytes);
  }
  return ParseNpy(file.bytes(), path);
}

Status WriteNpy(const std::string& path, DType dtype, std::span<const int64_t> shape,
                const void* data) {
  const char* descr = DescrFromDType(dtype);
  if (descr == nullptr) {
    return Fail(ErrorCode::kUnsupported, "{}: cannot store {} in .npy", path, DTypeName(dtype));
  }
  std::string dict = std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': (";
  uint64_t count = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    dict += std::to_string(shape[i]);
    dict += (shape.size() == 1 || i + 1 < shape.size()) ? ", " : "";
    count *= static_cast<uint64_t>(shape[i]);
  }
  while (!dict.empty() && dict.back() == ' ') dict.pop_back();
  dict += "), }";
  // Version 1 header: magic(6) + version(2) + len(2) + dict padded with spaces and '\n' so the
  // data starts on a 64-byte boundary.
  size_t total = kMagicSize + 4 + dict.size() + 1;
  const size_t padding = (64 - total % 64) % 64;
  dict.append(padding, ' ');
  dict += '\n';
  std::vector<uint8_t> bytes(kMagic, kMagic + kMagicSize);
  bytes.push_back(1);
  bytes.push_back(0);
  bytes.push_back(static_cast<uint8_t>(dict.size() & 0xff));
  bytes.push_back(static_cast<uint8_t>(dict.size() >> 8));
  bytes.insert(bytes.end(), dict.begin(), dict.end());
  const auto* p = static_cast<const uint8_t*>(data);
  bytes.insert(bytes.end(), p, p + count * DTypeSize(dtype));
  return WriteFileAtomically(path, bytes);
}

}  // namespace mineru
