// SPDX-License-Identifier: Apache-2.0
#include "image/data_url.h"

#include <array>

namespace mineru::image {
namespace {

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

constexpr std::array<int8_t, 256> MakeDecodeTable() {
  std::array<int8_t, 256> table{};
  for (size_t i = 0; i < 256; ++i) table[i] = -1;
  for (int i = 0; i < 64; ++i) table[static_cast<uint8_t>(kAlphabet[i])] = static_cast<int8_t>(i);
  return table;
}

}  // namespace

std::string Base64Encode(std::span<const uint8_t> bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    const uint32_t v = uint32_t{bytes[i]} << 16 | bytes[i + 1] << 8 | bytes[i + 2];
    out += kAlphabet[v >> 18];
    out += kAlphabet[(v >> 12) & 63];
    out += kAlphabet[(v >> 6) & 63];
    out += kAlphabet[v & 63];
  }
  if (i < bytes.size()) {
    const bool two = i + 2 == bytes.size();
    const uint32_t v = uint32_t{bytes[i]} << 16 | (two ? bytes[i + 1] << 8 : 0);
    out += kAlphabet[v >> 18];
    out += kAlphabet[(v >> 12) & 63];
    out += two ? kAlphabet[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

Result<std::vector<uint8_t>> Base64Decode(std::string_view text) {
  static constexpr std::array<int8_t, 256> kTable = MakeDecodeTable();
  if (text.size() % 4 != 0) {
    return Fail(ErrorCode::kCorrupt, "base64: length {} is not a multiple of 4", text.size());
  }
  std::vector<uint8_t> out;
  out.reserve(text.size() / 4 * 3);
  for (size_t i = 0; i < text.size(); i += 4) {
    const bool last = i + 4 == text.size();
    int v[4];
    int padding = 0;
    for (int j = 0; j < 4; ++j) {
      const char c = text[i + j];
      if (c == '=' && last && j >= 2) {
        v[j] = 0;
        ++padding;
        continue;
      }
      v[j] = kTable[static_cast<uint8_t>(c)];
      if (v[j] < 0 || padding > 0) {
        return Fail(ErrorCode::kCorrupt, "base64: invalid character at offset {}", i + j);
      }
    }
    const uint32_t bits = uint32_t(v[0]) << 18 | v[1] << 12 | v[2] << 6 | v[3];
    out.push_back(static_cast<uint8_t>(bits >> 16));
    if (padding < 2) out.push_back(static_cast<uint8_t>(bits >> 8));
    if (padding < 1) out.push_back(static_cast<uint8_t>(bits));
  }
  return out;
}

std::string MakeDataUrl(std::string_view mime_type, std::span<const uint8_t> bytes) {
  std::string url = "data:";
  url += mime_type;
  url += ";base64,";
  url += Base64Encode(bytes);
  return url;
}

Result<DataUrl> ParseDataUrl(std::string_view url, uint64_t max_bytes) {
  static constexpr std::string_view kScheme = "data:", kMarker = ";base64,";
  if (url.substr(0, kScheme.size()) != kScheme) {
    return Fail(ErrorCode::kInvalidArgument, "not a data: URL");
  }
  const size_t marker = url.find(kMarker);
  if (marker == std::string_view::npos) {
    return Fail(ErrorCode::kInvalidArgument,
                "data: URL without ';base64,' (only base64 payloads "
                "are accepted)");
  }
  const std::string_view payload = url.substr(marker + kMarker.size());
  if (payload.size() / 4 * 3 > max_bytes + 2) {
    return Fail(ErrorCode::kResourceExhausted,
                "data: URL payload of {} characters decodes to more than {} bytes", payload.size(),
                max_bytes);
  }
  DataUrl out;
  out.mime_type = std::string(url.substr(kScheme.size(), marker - kScheme.size()));
  MINERU_ASSIGN_OR_RETURN(out.bytes, Base64Decode(payload));
  if (out.bytes.size() > max_bytes) {
    return Fail(ErrorCode::kResourceExhausted, "data: URL payload of {} bytes is over {} bytes",
                out.bytes.size(), max_bytes);
  }
  return out;
}

}  // namespace mineru::image
