// SPDX-License-Identifier: Apache-2.0
#include "cache/document_outputs.h"

#include <algorithm>
#include <filesystem>
#include <span>

#include "base/mapped_file.h"

namespace mineru::jobs {
namespace fs = std::filesystem;

bool IsPlainFileName(std::string_view name) {
  return !name.empty() && name[0] != '.' && name.find('/') == std::string_view::npos &&
         name.find('\0') == std::string_view::npos;
}

uint64_t DocumentOutputs::ByteSize() const {
  uint64_t n = name.size() + markdown.size() + middle_json.size() + model_json.size() +
               content_list.size() + report.size() + content_list_v2.size() + layout_pdf.size();
  for (const auto& [file, bytes] : images) n += file.size() + bytes.size();
  return n;
}

namespace {

// Reads one file, charging it to the remaining budget.
Status ReadInto(const fs::path& path, uint64_t* budget, std::string* out) {
  MINERU_ASSIGN_OR_RETURN(*out, ReadFileToString(path.string(), static_cast<size_t>(*budget)));
  *budget -= out->size();
  return OkStatus();
}

Status Write(const fs::path& path, const std::string& bytes) {
  return WriteFileAtomically(
      path.string(), std::span(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
}

}  // namespace

Result<DocumentOutputs> ReadDocumentOutputs(const std::string& dir, const std::string& name,
                                            uint64_t max_bytes) {
  DocumentOutputs out;
  out.name = name;
  const fs::path base(dir);
  uint64_t budget = max_bytes;
  MINERU_RETURN_IF_ERROR(ReadInto(base / (name + ".md"), &budget, &out.markdown));
  MINERU_RETURN_IF_ERROR(ReadInto(base / (name + "_middle.json"), &budget, &out.middle_json));
  MINERU_RETURN_IF_ERROR(ReadInto(base / (name + "_model.json"), &budget, &out.model_json));
  MINERU_RETURN_IF_ERROR(
      ReadInto(base / (name + "_content_list.json"), &budget, &out.content_list));
  MINERU_RETURN_IF_ERROR(ReadInto(base / (name + "_report.json"), &budget, &out.report));
  std::error_code ec;
  for (const auto& [suffix, field] : {std::pair{"_content_list_v2.json", &out.content_list_v2},
                                      std::pair{"_layout.pdf", &out.layout_pdf}}) {
    const fs::path path = base / (name + suffix);
    if (fs::is_regular_file(path, ec)) MINERU_RETURN_IF_ERROR(ReadInto(path, &budget, field));
  }
  const fs::path images = base / "images";
  if (fs::is_directory(images, ec)) {
    for (const fs::directory_entry& entry : fs::directory_iterator(images, ec)) {
      if (!entry.is_regular_file(ec)) continue;
      std::string bytes;
      MINERU_RETURN_IF_ERROR(ReadInto(entry.path(), &budget, &bytes));
      out.images.emplace_back(entry.path().filename().string(), std::move(bytes));
    }
    if (ec) return Fail(ErrorCode::kIo, "{}: cannot list: {}", images.string(), ec.message());
  }
  std::sort(out.images.begin(), out.images.end());
  return out;
}

Status WriteDocumentOutputs(const DocumentOutputs& outputs, const std::string& dir) {
  const fs::path base(dir);
  std::error_code ec;
  fs::create_directories(base / "images", ec);
  if (ec) return Fail(ErrorCode::kIo, "{}: cannot create: {}", dir, ec.message());
  const std::string& n = outputs.name;
  MINERU_RETURN_IF_ERROR(Write(base / (n + ".md"), outputs.markdown));
  MINERU_RETURN_IF_ERROR(Write(base / (n + "_middle.json"), outputs.middle_json));
  MINERU_RETURN_IF_ERROR(Write(base / (n + "_model.json"), outputs.model_json));
  MINERU_RETURN_IF_ERROR(Write(base / (n + "_content_list.json"), outputs.content_list));
  MINERU_RETURN_IF_ERROR(Write(base / (n + "_report.json"), outputs.report));
  if (!outputs.content_list_v2.empty()) {
    MINERU_RETURN_IF_ERROR(Write(base / (n + "_content_list_v2.json"), outputs.content_list_v2));
  }
  if (!outputs.layout_pdf.empty()) {
    MINERU_RETURN_IF_ERROR(Write(base / (n + "_layout.pdf"), outputs.layout_pdf));
  }
  for (const auto& [file, bytes] : outputs.images) {
    MINERU_RETURN_IF_ERROR(Write(base / "images" / file, bytes));
  }
  return OkStatus();
}

}  // namespace mineru::jobs
