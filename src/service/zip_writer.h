// SPDX-License-Identifier: Apache-2.0
// Builds a ZIP archive in memory (the /v1/tasks/{id}/zip and MinerU's response_format_zip
// answers). libzip does the writing; its types stay in zip_writer.cc.
//
//   ZipWriter zip;
//   MINERU_RETURN_IF_ERROR(zip.Add("paper/paper.md", markdown));
//   MINERU_RETURN_IF_ERROR(zip.Add("paper/images/0.jpg", jpeg));
//   MINERU_ASSIGN_OR_RETURN(std::string archive, zip.Finish());
//
// Entry paths are relative and '/'-separated: not empty, no leading '/', no '\', no empty, "."
// or ".." segments, no control characters, valid UTF-8 (stored with the UTF-8 flag), each path
// once, at most kMaxZipPathBytes long. Anything else is refused with kInvalidArgument, so an
// archive never extracts outside its folder. Entries keep the order they were added in.
#pragma once

#include <ctime>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace mineru::service {

// The ZIP format stores a name's length in 16 bits.
inline constexpr size_t kMaxZipPathBytes = 65535;

enum class ZipCompression {
  kAuto,     // by extension: stored for formats that are compressed already, else deflated
  kDeflate,  // deflate
  kStore,    // no compression
};

// True for the extensions kAuto stores (.jpg, .jpeg, .png, .webp, .gif, .zip, .gz; any case).
bool IsCompressedFormat(std::string_view path);

class ZipWriter {
 public:
  // Entries get the current time as their modification time.
  ZipWriter();
  // Entries get `mtime` (for reproducible archives).
  explicit ZipWriter(std::time_t mtime);

  // Copies `bytes` as the entry `path_in_archive`; errors leave the writer unchanged.
  Status Add(std::string_view path_in_archive, std::string_view bytes,
             ZipCompression compression = ZipCompression::kAuto);
  // The whole archive (an empty one when nothing was added). Once only: further Add or Finish
  // calls are errors.
  Result<std::string> Finish();

 private:
  struct Entry {
    std::string path;
    std::string bytes;
    bool deflate = true;
  };
  std::time_t mtime_;
  std::vector<Entry> entries_;
  std::set<std::string, std::less<>> paths_;
  bool finished_ = false;
};

}  // namespace mineru::service
