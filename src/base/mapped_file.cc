// SPDX-License-Identifier: Apache-2.0
#include "base/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

namespace mineru {
namespace {

std::string ErrnoText() { return std::strerror(errno); }

// Closes a file descriptor on scope exit.
struct FdCloser {
  int fd;
  ~FdCloser() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

Result<MappedFile> MappedFile::Open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return Fail(errno == ENOENT ? ErrorCode::kNotFound : ErrorCode::kIo, "{}: cannot open: {}",
                path, ErrnoText());
  }
  FdCloser closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) return Fail(ErrorCode::kIo, "{}: cannot stat: {}", path, ErrnoText());
  if (!S_ISREG(st.st_mode))
    return Fail(ErrorCode::kInvalidArgument, "{}: not a regular file", path);
  MappedFile file;
  file.path_ = path;
  file.size_ = static_cast<size_t>(st.st_size);
  if (file.size_ == 0) return file;  // mmap of length 0 is invalid; an empty view is fine
  void* data = ::mmap(nullptr, file.size_, PROT_READ, MAP_PRIVATE, fd, 0);
  if (data == MAP_FAILED) return Fail(ErrorCode::kIo, "{}: cannot mmap: {}", path, ErrnoText());
  file.data_ = static_cast<const uint8_t*>(data);
  return file;
}

MappedFile::MappedFile(MappedFile&& other) noexcept { *this = std::move(other); }

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    Reset();
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    path_ = std::move(other.path_);
  }
  return *this;
}

MappedFile::~MappedFile() { Reset(); }

void MappedFile::Reset() {
  if (data_ != nullptr) ::munmap(const_cast<uint8_t*>(data_), size_);
  data_ = nullptr;
  size_ = 0;
}

void DropMappedPages(const void* data, size_t bytes) {
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const auto begin = reinterpret_cast<uintptr_t>(data);
  const uintptr_t first = (begin + page - 1) / page * page;
  const uintptr_t last = (begin + bytes) / page * page;
  if (last > first) madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED);
}

Result<std::string> ReadFileToString(const std::string& path, size_t max_bytes) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return Fail(errno == ENOENT ? ErrorCode::kNotFound : ErrorCode::kIo, "{}: cannot open: {}",
                path, ErrnoText());
  }
  FdCloser closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) return Fail(ErrorCode::kIo, "{}: cannot stat: {}", path, ErrnoText());
  if (!S_ISREG(st.st_mode))
    return Fail(ErrorCode::kInvalidArgument, "{}: not a regular file", path);
  if (static_cast<uint64_t>(st.st_size) > max_bytes) {
    return Fail(ErrorCode::kResourceExhausted, "{}: {} bytes is over the limit of {} bytes", path,
                st.st_size, max_bytes);
  }
  std::string text(static_cast<size_t>(st.st_size), '\0');
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::read(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Fail(ErrorCode::kIo, "{}: read failed: {}", path, ErrnoText());
    if (n == 0) break;
    done += static_cast<size_t>(n);
  }
  text.resize(done);
  return text;
}

Result<AtomicFileWriter> AtomicFileWriter::Create(const std::string& path) {
  AtomicFileWriter writer;
  writer.path_ = path;
  writer.tmp_path_ = path + ".tmp";
  writer.fd_ = ::open(writer.tmp_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (writer.fd_ < 0) {
    return Fail(ErrorCode::kIo, "{}: cannot create: {}", writer.tmp_path_, ErrnoText());
  }
  return writer;
}

AtomicFileWriter::AtomicFileWriter(AtomicFileWriter&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      path_(std::move(other.path_)),
      tmp_path_(std::move(other.tmp_path_)) {}

AtomicFileWriter::~AtomicFileWriter() {
  if (fd_ >= 0) {
    ::close(fd_);
    ::unlink(tmp_path_.c_str());
  }
}

Status AtomicFileWriter::Write(std::span<const uint8_t> bytes) {
  if (fd_ < 0) return Fail(ErrorCode::kInternal, "{}: write after commit", path_);
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd_, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Fail(ErrorCode::kIo, "{}: write failed: {}", tmp_path_, ErrnoText());
    done += static_cast<size_t>(n);
  }
  return OkStatus();
}

Status AtomicFileWriter::Commit() {
  if (fd_ < 0) return Fail(ErrorCode::kInternal, "{}: committed twice", path_);
  const int fd = std::exchange(fd_, -1);
  if (::close(fd) != 0) {
    ::unlink(tmp_path_.c_str());
    return Fail(ErrorCode::kIo, "{}: close failed: {}", tmp_path_, ErrnoText());
  }
  if (::rename(tmp_path_.c_str(), path_.c_str()) != 0) {
    ::unlink(tmp_path_.c_str());
    return Fail(ErrorCode::kIo, "{}: rename failed: {}", path_, ErrnoText());
  }
  return OkStatus();
}

Status WriteFileAtomically(const std::string& path, std::span<const uint8_t> bytes) {
  MINERU_ASSIGN_OR_RETURN(AtomicFileWriter writer, AtomicFileWriter::Create(path));
  MINERU_RETURN_IF_ERROR(writer.Write(bytes));
  return writer.Commit();
}

}  // namespace mineru
