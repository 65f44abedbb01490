// SPDX-License-Identifier: Apache-2.0
#include "image/decode.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <vector>

#include "image/codecs.h"
#include "image/transform.h"

namespace mineru::image {
namespace {

// The format a file name's extension promises, as its makers spell it ("" for none of ours).
std::string_view FormatPromisedBy(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  const size_t dot = path.find_last_of('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return "";
  std::string ext = path.substr(dot + 1);
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (ext == "png") return "PNG";
  if (ext == "jpg" || ext == "jpeg" || ext == "jpe" || ext == "jfif") return "JPEG";
  if (ext == "webp") return "WebP";
  if (ext == "tif" || ext == "tiff") return "TIFF";
  if (ext == "bmp" || ext == "dib") return "BMP";
  if (ext == "gif") return "GIF";
  return "";
}

}  // namespace

std::string_view FormatName(ImageFormat format) {
  switch (format) {
    case ImageFormat::kPng:
      return "png";
    case ImageFormat::kJpeg:
      return "jpeg";
    case ImageFormat::kWebp:
      return "webp";
    case ImageFormat::kTiff:
      return "tiff";
    case ImageFormat::kBmp:
      return "bmp";
    case ImageFormat::kGif:
      return "gif";
    case ImageFormat::kUnknown:
      break;
  }
  return "unknown";
}

std::string_view FormatMimeType(ImageFormat format) {
  switch (format) {
    case ImageFormat::kPng:
      return "image/png";
    case ImageFormat::kJpeg:
      return "image/jpeg";
    case ImageFormat::kWebp:
      return "image/webp";
    case ImageFormat::kTiff:
      return "image/tiff";
    case ImageFormat::kBmp:
      return "image/bmp";
    case ImageFormat::kGif:
      return "image/gif";
    case ImageFormat::kUnknown:
      break;
  }
  return "application/octet-stream";
}

ImageFormat SniffFormat(std::span<const uint8_t> b) {
  auto starts = [&](std::initializer_list<uint8_t> magic, size_t at = 0) {
    if (b.size() < at + magic.size()) return false;
    return std::memcmp(b.data() + at, magic.begin(), magic.size()) == 0;
  };
  if (starts({0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'})) return ImageFormat::kPng;
  if (starts({0xff, 0xd8, 0xff})) return ImageFormat::kJpeg;
  if (starts({'G', 'I', 'F', '8', '7', 'a'}) || starts({'G', 'I', 'F', '8', '9', 'a'})) {
    return ImageFormat::kGif;
  }
  if (starts({'R', 'I', 'F', 'F'}) && starts({'W', 'E', 'B', 'P'}, 8)) return ImageFormat::kWebp;
  // Classic TIFF and BigTIFF, both byte orders.
  if (starts({'I', 'I', 0x2a, 0}) || starts({'M', 'M', 0, 0x2a}) || starts({'I', 'I', 0x2b, 0}) ||
      starts({'M', 'M', 0, 0x2b})) {
    return ImageFormat::kTiff;
  }
  if (starts({'B', 'M'})) return ImageFormat::kBmp;
  return ImageFormat::kUnknown;
}

Status CheckDimensions(std::string_view format, int64_t width, int64_t height,
                       const DecodeLimits& limits) {
  if (width < 1 || height < 1) {
    return Fail(ErrorCode::kCorrupt, "{}: image size {} x {} is empty", format, width, height);
  }
  if (width > limits.max_width) {
    return Fail(ErrorCode::kResourceExhausted, "{}: {} x {} pixels: width is over the limit of {}",
                format, width, height, limits.max_width);
  }
  if (height > limits.max_height) {
    return Fail(ErrorCode::kResourceExhausted, "{}: {} x {} pixels: height is over the limit of {}",
                format, width, height, limits.max_height);
  }
  // Compared by division: with limits raised far enough the product could overflow.
  if (width > limits.max_pixels / height) {
    return Fail(ErrorCode::kResourceExhausted, "{}: {} x {} = {} pixels is over the limit of {}",
                format, width, height, static_cast<double>(width) * static_cast<double>(height),
                limits.max_pixels);
  }
  return OkStatus();
}

namespace internal {

Result<RgbImage> AllocateImage(std::string_view format, int64_t width, int64_t height,
                               const DecodeLimits& limits) {
  MINERU_RETURN_IF_ERROR(CheckDimensions(format, width, height, limits));
  if (width > kMaxImageSide || height > kMaxImageSide || width * height > kMaxImagePixels) {
    return Fail(ErrorCode::kResourceExhausted,
                "{}: {} x {} pixels is more than this library "
                "handles",
                format, width, height);
  }
  RgbImage image;
  image.width = width;
  image.height = height;
  image.pixels.assign(static_cast<size_t>(width * height) * 3, 0);
  return image;
}

}  // namespace internal

Result<DecodedImage> DecodeImage(std::span<const uint8_t> bytes, const DecodeOptions& options) {
  if (bytes.size() > options.limits.max_bytes) {
    return Fail(ErrorCode::kResourceExhausted, "image of {} bytes is over the limit of {} bytes",
                bytes.size(), options.limits.max_bytes);
  }
  const ImageFormat format = SniffFormat(bytes);
  Result<internal::CodecOutput> out = Fail(ErrorCode::kInternal, "not decoded");
  switch (format) {
    case ImageFormat::kPng:
      out = internal::DecodePng(bytes, options.limits);
      break;
    case ImageFormat::kJpeg:
      out = internal::DecodeJpeg(bytes, options.limits);
      break;
    case ImageFormat::kWebp:
      out = internal::DecodeWebp(bytes, options.limits);
      break;
    case ImageFormat::kTiff:
      out = internal::DecodeTiff(bytes, options.limits);
      break;
    case ImageFormat::kBmp:
      out = internal::DecodeBmp(bytes, options.limits);
      break;
    case ImageFormat::kGif:
      out = internal::DecodeGif(bytes, options.limits);
      break;
    case ImageFormat::kUnknown:
      return Fail(ErrorCode::kUnsupported,
                  "not a PNG, JPEG, WebP, TIFF, BMP or GIF file (unknown magic bytes)");
  }
  if (!out) return tl::unexpected(std::move(out).error());
  DecodedImage decoded;
  decoded.format = format;
  decoded.source_mode = std::string(out->mode);
  if (options.apply_exif_orientation && out->orientation >= 2 && out->orientation <= 8) {
    decoded.orientation = out->orientation;
    decoded.image = ApplyExifOrientation(std::move(out->image), out->orientation);
  } else {
    decoded.image = std::move(out->image);
  }
  return decoded;
}

Result<DecodedImage> DecodeImageFile(const std::string& path, const DecodeOptions& options) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    return Fail(err == ENOENT ? ErrorCode::kNotFound : ErrorCode::kIo, "{}: cannot open: {}", path,
                std::strerror(err));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return Fail(ErrorCode::kIo, "{}: not a regular file", path);
  }
  const auto size = static_cast<uint64_t>(st.st_size);
  if (size > options.limits.max_bytes) {
    ::close(fd);
    return Fail(ErrorCode::kResourceExhausted, "{}: {} bytes is over the limit of {} bytes", path,
                size, options.limits.max_bytes);
  }
  std::vector<uint8_t> bytes(size);
  size_t done = 0;
  while (done < size) {
    const ssize_t n = ::read(fd, bytes.data() + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = errno;
      ::close(fd);
      return Fail(ErrorCode::kIo, "{}: read failed: {}", path,
                  n == 0 ? "file shrank while reading" : std::strerror(err));
    }
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  if (SniffFormat(bytes) == ImageFormat::kUnknown) {
    if (const std::string_view promised = FormatPromisedBy(path); !promised.empty()) {
      if (bytes.empty())
        return Fail(ErrorCode::kUnsupported, "{}: empty file, not a {}", path, promised);
      return Fail(ErrorCode::kUnsupported, "{}: not a {} file (unknown magic bytes)", path,
                  promised);
    }
  }
  auto decoded = DecodeImage(bytes, options);
  if (!decoded) return tl::unexpected(WithContext(std::move(decoded).error(), path));
  return decoded;
}

}  // namespace mineru::image
