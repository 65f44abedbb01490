// SPDX-License-Identifier: Apache-2.0
// ZipWriter (zip_writer.h) on libzip: the entries are kept until Finish(), which writes them all
// into a libzip in-memory buffer source and copies the archive out of it.
#include "service/zip_writer.h"

#include <zip.h>

#include <algorithm>
#include <array>
#include <memory>
#include <utility>

#include "text/utf8.h"

namespace mineru::service {
namespace {

// The end-of-central-directory record alone: a valid archive without entries. libzip writes
// nothing at all for an archive without entries (it removes the file instead).
constexpr std::array<char, 22> kEmptyArchive = {'P', 'K', 5, 6};

char LowerAscii(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

Status CheckPath(std::string_view path) {
  if (path.empty()) return Fail(ErrorCode::kInvalidArgument, "zip entry path is empty");
  if (path.size() > kMaxZipPathBytes) {
    return Fail(ErrorCode::kInvalidArgument, "zip entry path is longer than {} bytes",
                kMaxZipPathBytes);
  }
  if (!text::IsValidUtf8(path)) {
    return Fail(ErrorCode::kInvalidArgument, "zip entry path is not UTF-8");
  }
  for (char c : path) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7F || c == '\\') {
      return Fail(ErrorCode::kInvalidArgument,
                  "zip entry path '{}' has a control character or '\\'", path);
    }
  }
  std::string_view rest = path;
  while (true) {
    const size_t slash = rest.find('/');
    const std::string_view segment = rest.substr(0, slash);
    if (segment.empty() || segment == "." || segment == "..") {
      return Fail(ErrorCode::kInvalidArgument,
                  "zip entry path '{}' is not relative or has an empty, '.' or '..' segment", path);
    }
    if (slash == std::string_view::npos) break;
    rest.remove_prefix(slash + 1);
  }
  return OkStatus();
}

struct ArchiveDiscarder {
  void operator()(zip_t* archive) const { zip_discard(archive); }
};
struct SourceFreer {
  void operator()(zip_source_t* source) const { zip_source_free(source); }
};

Error ZipError(std::string_view what, zip_error_t* error) {
  return Error{ErrorCode::kInternal,
               fmt::format("writing zip archive: {}: {}", what, zip_error_strerror(error))};
}

}  // namespace

bool IsCompressedFormat(std::string_view path) {
  const size_t dot = path.rfind('.');
  if (dot == std::string_view::npos || path.find('/', dot) != std::string_view::npos) return false;
  std::string extension(path.substr(dot + 1));
  for (char& c : extension) c = LowerAscii(c);
  for (std::string_view compressed : {"jpg", "jpeg", "png", "webp", "gif", "zip", "gz"}) {
    if (extension == compressed) return true;
  }
  return false;
}

ZipWriter::ZipWriter() : ZipWriter(std::time(nullptr)) {}

ZipWriter::ZipWriter(std::time_t mtime) : mtime_(mtime) {}

Status ZipWriter::Add(std::string_view path_in_archive, std::string_view bytes,
                      ZipCompression compression) {
  if (finished_) return Fail(ErrorCode::kInvalidArgument, "zip archive is already finished");
  MINERU_RETURN_IF_ERROR(CheckPath(path_in_archive));
  if (paths_.contains(path_in_archive)) {
    return Fail(ErrorCode::kInvalidArgument, "zip entry '{}' added twice", path_in_archive);
  }
  const bool deflate =
      compression == ZipCompression::kDeflate ||
      (compression == ZipCompression::kAuto && !IsCompressedFormat(path_in_archive));
  paths_.emplace(path_in_archive);
  entries_.push_back({std::string(path_in_archive), std::string(bytes), deflate});
  return OkStatus();
}

Result<std::string> ZipWriter::Finish() {
  if (finished_) return Fail(ErrorCode::kInvalidArgument, "zip archive is already finished");
  finished_ = true;
  if (entries_.empty()) return std::string(kEmptyArchive.begin(), kEmptyArchive.end());

  zip_error_t error;
  zip_error_init(&error);
  std::unique_ptr<zip_source_t, SourceFreer> buffer(
      zip_source_buffer_create(nullptr, 0, 0, &error));
  if (!buffer) {
    Error e = ZipError("creating the buffer", &error);
    zip_error_fini(&error);
    return tl::unexpected(std::move(e));
  }
  // The archive takes a reference on open and drops it on close; this one keeps the buffer
  // (with the written archive) alive after zip_close.
  zip_source_keep(buffer.get());
  std::unique_ptr<zip_t, ArchiveDiscarder> archive(
      zip_open_from_source(buffer.get(), ZIP_TRUNCATE, &error));
  if (!archive) {
    zip_source_free(buffer.get());  // the reference zip_open_from_source did not take
    Error e = ZipError("opening", &error);
    zip_error_fini(&error);
    return tl::unexpected(std::move(e));
  }
  for (const Entry& entry : entries_) {
    // The bytes stay in entries_ until zip_close has read them (freep = 0).
    zip_source_t* source =
        zip_source_buffer(archive.get(), entry.bytes.data(), entry.bytes.size(), 0);
    if (source == nullptr)
      return tl::unexpected(ZipError(entry.path, zip_get_error(archive.get())));
    const zip_int64_t index =
        zip_file_add(archive.get(), entry.path.c_str(), source, ZIP_FL_ENC_UTF_8);
    if (index < 0) {
      zip_source_free(source);  // not taken over on failure
      return tl::unexpected(ZipError(entry.path, zip_get_error(archive.get())));
    }
    if (zip_set_file_compression(archive.get(), index,
                                 entry.deflate ? ZIP_CM_DEFLATE : ZIP_CM_STORE, 0) != 0 ||
        zip_file_set_mtime(archive.get(), index, mtime_, 0) != 0) {
      return tl::unexpected(ZipError(entry.path, zip_get_error(archive.get())));
    }
  }
  if (zip_close(archive.get()) != 0) {
    return tl::unexpected(ZipError("closing", zip_get_error(archive.get())));
  }
  archive.release();  // zip_close freed it

  std::string out;
  if (zip_source_open(buffer.get()) != 0) {
    return tl::unexpected(ZipError("reading back", zip_source_error(buffer.get())));
  }
  std::array<char, 64 * 1024> chunk;
  while (true) {
    const zip_int64_t n = zip_source_read(buffer.get(), chunk.data(), chunk.size());
    if (n < 0) {
      zip_source_close(buffer.get());
      return tl::unexpected(ZipError("reading back", zip_source_error(buffer.get())));
    }
    if (n == 0) break;
    out.append(chunk.data(), static_cast<size_t>(n));
  }
  zip_source_close(buffer.get());
  entries_.clear();
  return out;
}

}  // namespace mineru::service
