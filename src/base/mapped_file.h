// SPDX-License-Identifier: Apache-2.0
// A read-only memory mapping of a whole file. Checkpoint weights are used in place from the
// mapping (no copy); the kernel pages them in on first touch and may drop them under pressure.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "base/status.h"

namespace mineru {

class MappedFile {
 public:
  static Result<MappedFile> Open(const std::string& path);

  MappedFile() = default;
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  std::span<const uint8_t> bytes() const { return {data_, size_}; }
  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  const std::string& path() const { return path_; }

 private:
  void Reset();

  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  std::string path_;
};

// Tells the kernel this process no longer needs the pages wholly inside [data, data + bytes)
// of a read-only file mapping: they leave the resident set (the page cache may keep them) and
// are read again from the file if touched. A hint; errors are ignored.
void DropMappedPages(const void* data, size_t bytes);

// Reads a whole (small) file into a string, refusing files over max_bytes.
Result<std::string> ReadFileToString(const std::string& path, size_t max_bytes);

// Writes a file so that readers see either nothing or the whole file: bytes go to
// "<path>.tmp", Commit() renames it over path. Destroyed uncommitted, it removes the temporary.
class AtomicFileWriter {
 public:
  static Result<AtomicFileWriter> Create(const std::string& path);

  AtomicFileWriter(AtomicFileWriter&& other) noexcept;
  AtomicFileWriter& operator=(AtomicFileWriter&&) = delete;
  ~AtomicFileWriter();

  Status Write(std::span<const uint8_t> bytes);
  Status Commit();

 private:
  AtomicFileWriter() = default;
  int fd_ = -1;
  std::string path_;
  std::string tmp_path_;
};

Status WriteFileAtomically(const std::string& path, std::span<const uint8_t> bytes);

}  // namespace mineru
