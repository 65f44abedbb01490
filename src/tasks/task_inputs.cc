// SPDX-License-Identifier: Apache-2.0
#include "tasks/task_inputs.h"

#include <filesystem>
#include <span>
#include <string_view>

#include "cache/document_outputs.h"
#include "image/decode.h"
#include "image/probe.h"

namespace mineru::jobs {
namespace fs = std::filesystem;
namespace {

bool IsPdfBytes(std::string_view bytes) {
  return bytes.substr(0, 1024).find("%PDF-") != std::string_view::npos;
}

std::span<const uint8_t> Bytes(std::string_view bytes) {
  return {reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()};
}

bool IsSupportedDocument(std::string_view bytes) {
  if (IsPdfBytes(bytes)) return true;
  return image::SniffFormat(Bytes(bytes)) != image::ImageFormat::kUnknown;
}

// An image upload's header against the decoding limits and the request's decoded-bytes budget:
// what the task would refuse from the header anyway, refused before it is queued.
Status CheckImageHeader(const TaskInput& f, const image::DecodeLimits& limits,
                        const image::ImageBudget& budget) {
  if (IsPdfBytes(f.bytes)) return OkStatus();
  auto header = image::ProbeImage(Bytes(f.bytes), limits);
  if (!header) {
    if (header.error().code != ErrorCode::kResourceExhausted) return OkStatus();
    return Fail(ErrorCode::kInvalidArgument, "{}: {}", f.name, header.error().message);
  }
  if (Status within = image::CheckRequestDecodedBytes(header->decoded_bytes(), budget, "the image");
      !within) {
    return Fail(ErrorCode::kInvalidArgument, "{}: {}", f.name, within.error().message);
  }
  return OkStatus();
}

}  // namespace

Status CheckTaskInputs(const std::vector<TaskInput>& files, size_t max_files,
                       const image::DecodeLimits& limits, const image::ImageBudget& budget) {
  if (files.empty()) return Fail(ErrorCode::kInvalidArgument, "no file was uploaded");
  if (files.size() > max_files) {
    return Fail(ErrorCode::kResourceExhausted, "{} files in one task; the limit is {}",
                files.size(), max_files);
  }
  for (const TaskInput& f : files) {
    if (!IsPlainFileName(f.name)) {
      return Fail(ErrorCode::kInvalidArgument, "bad file name '{}'", f.name);
    }
    if (!IsSupportedDocument(f.bytes)) {
      return Fail(ErrorCode::kInvalidArgument,
                  "Unsupported file type: {} (expected a PDF or a PNG, JPEG, WebP, TIFF, BMP "
                  "or GIF image)",
                  f.name);
    }
    MINERU_RETURN_IF_ERROR(CheckImageHeader(f, limits, budget));
  }
  return {};
}

uint64_t DirectoryBytes(const std::string& dir) {
  std::error_code ec;
  uint64_t total = 0;
  fs::recursive_directory_iterator it(dir, fs::directory_options::none, ec);
  for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    std::error_code entry_ec;
    if (it->is_regular_file(entry_ec) && !it->is_symlink(entry_ec)) {
      const uintmax_t size = it->file_size(entry_ec);
      if (!entry_ec) total += size;
    }
  }
  return total;
}

void RemoveStaleTaskDirectories(const std::string& work_dir) {
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(work_dir, ec)) {
    if (entry.is_directory(ec) && LooksLikeTaskId(entry.path().filename().string())) {
      fs::remove_all(entry.path(), ec);
    }
  }
}

}  // namespace mineru::jobs
