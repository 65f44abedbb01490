// SPDX-License-Identifier: Apache-2.0
#include "cache/document_codec.h"

namespace mineru::jobs {
namespace {

constexpr std::string_view kMagic = "MDOC";

void PutU64(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out += static_cast<char>((v >> (8 * i)) & 0xFF);
}

void PutString(std::string& out, std::string_view s) {
  PutU64(out, s.size());
  out.append(s);
}

// Reads from the front of `rest`; every method fails rather than read past its end.
class Reader {
 public:
  explicit Reader(std::string_view bytes) : rest_(bytes) {}

  Result<uint64_t> U64(std::string_view what) {
    if (rest_.size() < 8) return Truncated(what);
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= uint64_t{static_cast<uint8_t>(rest_[i])} << (8 * i);
    rest_.remove_prefix(8);
    return v;
  }

  Result<std::string> String(std::string_view what) {
    MINERU_ASSIGN_OR_RETURN(const uint64_t size, U64(what));
    if (size > rest_.size()) {
      return Fail(ErrorCode::kCorrupt, "cached document: {} claims {} bytes, {} are left", what,
                  size, rest_.size());
    }
    std::string s(rest_.substr(0, size));
    rest_.remove_prefix(size);
    return s;
  }

  size_t left() const { return rest_.size(); }

 private:
  tl::unexpected<Error> Truncated(std::string_view what) const {
    return Fail(ErrorCode::kCorrupt, "cached document: truncated at {}", what);
  }
  std::string_view rest_;
};

}  // namespace

std::string SerializeDocumentOutputs(const DocumentOutputs& o) {
  std::string out;
  out.reserve(o.ByteSize() + 64 + 16 * o.images.size());
  out.append(kMagic);
  for (int i = 0; i < 4; ++i) out += static_cast<char>((kDocumentCodecVersion >> (8 * i)) & 0xFF);
  for (const std::string* s : {&o.name, &o.markdown, &o.middle_json, &o.model_json, &o.content_list,
                               &o.report, &o.content_list_v2, &o.layout_pdf}) {
    PutString(out, *s);
  }
  PutU64(out, o.images.size());
  for (const auto& [file, bytes] : o.images) {
    PutString(out, file);
    PutString(out, bytes);
  }
  return out;
}

Result<DocumentOutputs> ParseDocumentOutputs(std::string_view bytes) {
  if (bytes.size() < 8 || bytes.substr(0, 4) != kMagic) {
    return Fail(ErrorCode::kCorrupt, "cached document: bad magic");
  }
  uint32_t version = 0;
  for (int i = 0; i < 4; ++i) version |= uint32_t{static_cast<uint8_t>(bytes[4 + i])} << (8 * i);
  if (version != kDocumentCodecVersion) {
    return Fail(ErrorCode::kCorrupt, "cached document: version {}, expected {}", version,
                kDocumentCodecVersion);
  }
  Reader in(bytes.substr(8));
  DocumentOutputs o;
  MINERU_ASSIGN_OR_RETURN(o.name, in.String("name"));
  MINERU_ASSIGN_OR_RETURN(o.markdown, in.String("markdown"));
  MINERU_ASSIGN_OR_RETURN(o.middle_json, in.String("middle_json"));
  MINERU_ASSIGN_OR_RETURN(o.model_json, in.String("model_json"));
  MINERU_ASSIGN_OR_RETURN(o.content_list, in.String("content_list"));
  MINERU_ASSIGN_OR_RETURN(o.report, in.String("report"));
  MINERU_ASSIGN_OR_RETURN(o.content_list_v2, in.String("content_list_v2"));
  MINERU_ASSIGN_OR_RETURN(o.layout_pdf, in.String("layout_pdf"));
  if (!o.name.empty() && !IsPlainFileName(o.name)) {
    return Fail(ErrorCode::kCorrupt, "cached document: bad name");
  }
  MINERU_ASSIGN_OR_RETURN(const uint64_t count, in.U64("image count"));
  if (count > in.left() / 16) {  // each image takes at least its two lengths
    return Fail(ErrorCode::kCorrupt, "cached document: {} images cannot fit in {} bytes", count,
                in.left());
  }
  o.images.reserve(count);
  for (uint64_t i = 0; i < count; ++i) {
    MINERU_ASSIGN_OR_RETURN(std::string file, in.String("image name"));
    if (!IsPlainFileName(file)) {
      return Fail(ErrorCode::kCorrupt, "cached document: image {} has a bad file name", i);
    }
    if (!o.images.empty() && !(o.images.back().first < file)) {
      return Fail(ErrorCode::kCorrupt, "cached document: image names not sorted and unique");
    }
    MINERU_ASSIGN_OR_RETURN(std::string data, in.String("image bytes"));
    o.images.emplace_back(std::move(file), std::move(data));
  }
  if (in.left() != 0) {
    return Fail(ErrorCode::kCorrupt, "cached document: {} bytes after the last image", in.left());
  }
  return o;
}

}  // namespace mineru::jobs
