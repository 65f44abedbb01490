// SPDX-License-Identifier: Apache-2.0
// libpng and libjpeg report errors by longjmp; as in the decoders, the functions that call them
// keep no C++ object with a destructor alive across a library call (state lives in a job struct
// owned by the caller).
#include "image/encode.h"

// jpeglib.h needs stdio.h (FILE, size_t) first.
#include <stdio.h>
// Then the library.
#include <jpeglib.h>
#include <png.h>

#include <csetjmp>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace mineru::image {
namespace {

Status CheckImage(const RgbImage& image, std::string_view format) {
  if (image.empty() ||
      image.pixels.size() != image.row_bytes() * static_cast<size_t>(image.height)) {
    return Fail(ErrorCode::kInvalidArgument, "{}: cannot encode an empty or inconsistent image",
                format);
  }
  // Both formats store sizes in at most 32 (PNG) or 16 (JPEG) bits.
  const int64_t max_side = format == "jpeg" ? 65500 : 0x7fffffff;
  if (image.width > max_side || image.height > max_side) {
    return Fail(ErrorCode::kInvalidArgument, "{}: {}x{} is larger than the format allows", format,
                image.width, image.height);
  }
  return OkStatus();
}

// ---------------------------------------------------------------------------------------------
// PNG

struct PngJob {
  const RgbImage* image;
  int level;
  bool filter_rows;
  uint32_t pixels_per_metre;
  std::vector<uint8_t> out;
  std::string error;
};

void PngOnError(png_structp png, png_const_charp message) {
  static_cast<PngJob*>(png_get_error_ptr(png))->error = message;
  png_longjmp(png, 1);
}
void PngOnWarning(png_structp, png_const_charp) {}
void PngOnWrite(png_structp png, png_bytep data, size_t length) {
  auto* job = static_cast<PngJob*>(png_get_io_ptr(png));
  job->out.insert(job->out.end(), data, data + length);
}
void PngOnFlush(png_structp) {}

bool WritePng(png_structp png, png_infop info, PngJob* job) {
  if (setjmp(png_jmpbuf(png))) return false;
  png_set_write_fn(png, job, PngOnWrite, PngOnFlush);
  png_set_compression_level(png, job->level);
  if (!job->filter_rows) png_set_filter(png, PNG_FILTER_TYPE_BASE, PNG_FILTER_NONE);
  png_set_IHDR(png, info, static_cast<png_uint_32>(job->image->width),
               static_cast<png_uint_32>(job->image->height), 8, PNG_COLOR_TYPE_RGB,
               PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  if (job->pixels_per_metre > 0) {
    png_set_pHYs(png, info, job->pixels_per_metre, job->pixels_per_metre, PNG_RESOLUTION_METER);
  }
  png_write_info(png, info);
  for (int64_t y = 0; y < job->image->height; ++y) {
    png_write_row(png, job->image->row(y));
  }
  png_write_end(png, nullptr);
  return true;
}

// ---------------------------------------------------------------------------------------------
// JPEG

struct JpegJob {
  const RgbImage* image;
  const JpegEncodeOptions* options;
  unsigned char* buffer = nullptr;  // jpeg_mem_dest's output, freed by the caller
  unsigned long size = 0;
  std::string error;
};

struct JpegErrorManager {
  jpeg_error_mgr pub;  // first member
  std::jmp_buf jump;
  JpegJob* job;
};

[[noreturn]] void JpegOnErrorExit(j_common_ptr cinfo) {
  auto* err = reinterpret_cast<JpegErrorManager*>(cinfo->err);
  char text[JMSG_LENGTH_MAX];
  (*cinfo->err->format_message)(cinfo, text);
  err->job->error = text;
  std::longjmp(err->jump, 1);
}
void JpegOnOutputMessage(j_common_ptr) {}

bool WriteJpeg(jpeg_compress_struct* cinfo, JpegErrorManager* err, JpegJob* job) {
  if (setjmp(err->jump)) return false;
  jpeg_create_compress(cinfo);
  jpeg_mem_dest(cinfo, &job->buffer, &job->size);
  cinfo->image_width = static_cast<JDIMENSION>(job->image->width);
  cinfo->image_height = static_cast<JDIMENSION>(job->image->height);
  cinfo->input_components = 3;
  cinfo->in_color_space = JCS_RGB;
  jpeg_set_defaults(cinfo);
  jpeg_set_quality(cinfo, job->options->quality, TRUE);
  // jpeg_set_defaults samples chroma 2x2 (4:2:0).
  switch (job->options->subsampling) {
    case ChromaSubsampling::k444:
      cinfo->comp_info[0].h_samp_factor = cinfo->comp_info[0].v_samp_factor = 1;
      break;
    case ChromaSubsampling::k422:
      cinfo->comp_info[0].h_samp_factor = 2;
      cinfo->comp_info[0].v_samp_factor = 1;
      break;
    case ChromaSubsampling::k420:
      break;
  }
  cinfo->optimize_coding = job->options->optimize_coding ? TRUE : FALSE;
  if (job->options->progressive) jpeg_simple_progression(cinfo);
  jpeg_start_compress(cinfo, TRUE);
  for (int64_t y = 0; y < job->image->height; ++y) {
    JSAMPROW row[1] = {const_cast<JSAMPLE*>(job->image->row(y))};
    jpeg_write_scanlines(cinfo, row, 1);
  }
  jpeg_finish_compress(cinfo);
  return true;
}

}  // namespace

Result<std::vector<uint8_t>> EncodePng(const RgbImage& image, const PngEncodeOptions& options) {
  MINERU_RETURN_IF_ERROR(CheckImage(image, "png"));
  if (options.compression_level < 0 || options.compression_level > 9) {
    return Fail(ErrorCode::kInvalidArgument, "png: compression level {} outside [0, 9]",
                options.compression_level);
  }
  PngJob job{&image, options.compression_level, options.filter_rows, options.pixels_per_metre, {},
             {}};
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &job, PngOnError, PngOnWarning);
  png_infop info = png != nullptr ? png_create_info_struct(png) : nullptr;
  if (info == nullptr) {
    png_destroy_write_struct(&png, nullptr);
    return Fail(ErrorCode::kResourceExhausted, "png: cannot create an encoder");
  }
  const bool ok = WritePng(png, info, &job);
  png_destroy_write_struct(&png, &info);
  if (!ok) return Fail(ErrorCode::kInternal, "png: encoding failed: {}", job.error);
  return std::move(job.out);
}

Result<std::vector<uint8_t>> EncodeJpeg(const RgbImage& image, const JpegEncodeOptions& options) {
  MINERU_RETURN_IF_ERROR(CheckImage(image, "jpeg"));
  if (options.quality < 1 || options.quality > 100) {
    return Fail(ErrorCode::kInvalidArgument, "jpeg: quality {} outside [1, 100]", options.quality);
  }
  JpegJob job{&image, &options, nullptr, 0, {}};
  jpeg_compress_struct cinfo{};
  JpegErrorManager err{};
  cinfo.err = jpeg_std_error(&err.pub);
  err.pub.error_exit = JpegOnErrorExit;
  err.pub.output_message = JpegOnOutputMessage;
  err.job = &job;
  const bool ok = WriteJpeg(&cinfo, &err, &job);
  jpeg_destroy_compress(&cinfo);
  Result<std::vector<uint8_t>> out =
      ok ? Result<std::vector<uint8_t>>(std::vector<uint8_t>(job.buffer, job.buffer + job.size))
         : Fail(ErrorCode::kInternal, "jpeg: encoding failed: {}", job.error);
  std::free(job.buffer);
  return out;
}

}  // namespace mineru::image
