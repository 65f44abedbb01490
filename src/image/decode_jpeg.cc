// SPDX-License-Identifier: Apache-2.0
// JPEG through libjpeg-turbo with the settings Pillow 9.4's JpegDecode.c leaves in place
// (islow DCT, fancy upsampling, block smoothing; colour space guessed by libjpeg from the JFIF
// and Adobe markers), so the pixels are the ones Pillow gets from the same library:
//   1 component  -> "L"    decoded as grey, R = G = B
//   3 components -> "RGB"  YCbCr (or Adobe RGB) converted by libjpeg
//   4 components -> "CMYK" decoded as CMYK (YCCK converted by libjpeg), then inverted: Pillow
//                          assumes Adobe's inverted CMYK for every 4-component JPEG ("CMYK;I")
//                          and then applies its own cmyk2rgb.
// The orientation comes from the first APP1 "Exif" segment, as Pillow's APP handler keeps it.
//
// Errors: libjpeg's error_exit would call exit(); ours longjmps back into ReadJpeg, which keeps
// no C++ object with a destructor alive across a libjpeg call. The end-of-data warning is an
// error (Pillow refuses truncated files); other warnings are ignored, as Pillow ignores them.
// A progress monitor stops a file after limits.max_jpeg_scans scans.
// jpeglib.h needs stdio.h (FILE, size_t) first.
#include <stdio.h>
// Then the library.
#include <jpeglib.h>
// jerror.h needs jpeglib.h first.
#include <jerror.h>

#include <algorithm>
#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "image/codecs.h"
#include "image/pixel_modes.h"

namespace mineru::image::internal {
namespace {

struct JpegJob {
  std::span<const uint8_t> data;
  const DecodeLimits* limits = nullptr;
  std::string error;
  ErrorCode code = ErrorCode::kCorrupt;
  CodecOutput out;
  std::vector<uint8_t> row;
  std::vector<uint8_t> cmyk;  // one inverted CMYK row
};

struct ErrorManager {
  jpeg_error_mgr pub;  // first member: libjpeg hands us a pointer to it
  std::jmp_buf jump;
  JpegJob* job;
};

void SetError(JpegJob* job, ErrorCode code, std::string message) {
  job->error = std::move(message);
  job->code = code;
}

// Called only between statements, so that no temporary is alive when the stack unwinds by
// longjmp.
[[noreturn]] void Jump(j_common_ptr cinfo) {
  std::longjmp(reinterpret_cast<ErrorManager*>(cinfo->err)->jump, 1);
}

JpegJob* JobOf(j_common_ptr cinfo) { return reinterpret_cast<ErrorManager*>(cinfo->err)->job; }

[[noreturn]] void OnErrorExit(j_common_ptr cinfo) {
  char text[JMSG_LENGTH_MAX];
  (*cinfo->err->format_message)(cinfo, text);
  SetError(JobOf(cinfo), ErrorCode::kCorrupt, fmt::format("jpeg: {}", text));
  Jump(cinfo);
}

void OnEmitMessage(j_common_ptr cinfo, int level) {
  if (level >= 0) return;  // trace messages
  if (cinfo->err->msg_code == JWRN_JPEG_EOF) {
    SetError(JobOf(cinfo), ErrorCode::kCorrupt, "jpeg: file is truncated (premature end of data)");
    Jump(cinfo);
  }
  ++cinfo->err->num_warnings;
}

void OnOutputMessage(j_common_ptr) {}  // never print

void OnProgress(j_common_ptr cinfo) {
  auto* d = reinterpret_cast<j_decompress_ptr>(cinfo);
  JpegJob* job = JobOf(cinfo);
  if (d->input_scan_number > job->limits->max_jpeg_scans) {
    SetError(job, ErrorCode::kResourceExhausted,
             fmt::format("jpeg: more than {} scans (the limit): a progressive file this "
                         "fragmented is a decoding-time bomb",
                         job->limits->max_jpeg_scans));
    Jump(cinfo);
  }
}

bool Allocate(JpegJob* job, int64_t width, int64_t height, int components) {
  auto image = AllocateImage("jpeg", width, height, *job->limits);
  if (!image) {
    job->error = image.error().message;
    job->code = image.error().code;
    return false;
  }
  job->out.image = std::move(*image);
  job->row.resize(static_cast<size_t>(width) * components);
  if (components == 4) job->cmyk.resize(static_cast<size_t>(width) * 4);
  return true;
}

bool SetUnsupported(JpegJob* job, int components) {
  job->error = fmt::format("jpeg: {}-component images are not supported (Pillow reads 1, 3 or 4)",
                           components);
  job->code = ErrorCode::kUnsupported;
  return false;
}

void ConvertRow(JpegJob* job, int components, uint8_t* out) {
  const auto w = static_cast<size_t>(job->out.image.width);
  if (components == 1) {
    GreyToRgb(job->row.data(), w, 1, out);
  } else if (components == 3) {
    std::memcpy(out, job->row.data(), w * 3);
  } else {
    for (size_t i = 0; i < w * 4; ++i) job->cmyk[i] = static_cast<uint8_t>(255 - job->row[i]);
    CmykToRgb(job->cmyk.data(), w, out);
  }
}

int FindOrientation(j_decompress_ptr cinfo) {
  for (jpeg_saved_marker_ptr m = cinfo->marker_list; m != nullptr; m = m->next) {
    if (m->marker == JPEG_APP0 + 1 && m->data_length >= 5 &&
        std::memcmp(m->data, "Exif\0", 5) == 0) {
      return ExifOrientation(std::span<const uint8_t>(m->data, m->data_length));
    }
  }
  return kExifOrientationAbsent;
}

// Every libjpeg call happens here; see the file comment about longjmp.
bool ReadJpeg(jpeg_decompress_struct* cinfo, ErrorManager* err, jpeg_progress_mgr* progress,
              JpegJob* job) {
  if (setjmp(err->jump)) return false;
  jpeg_create_decompress(cinfo);
  jpeg_mem_src(cinfo, job->data.data(), static_cast<unsigned long>(job->data.size()));
  jpeg_save_markers(cinfo, JPEG_APP0 + 1, 0xffff);
  cinfo->progress = progress;
  jpeg_read_header(cinfo, TRUE);
  const int components = cinfo->num_components;
  switch (components) {
    case 1:
      job->out.mode = "L";
      cinfo->out_color_space = JCS_GRAYSCALE;
      break;
    case 3:
      job->out.mode = "RGB";
      cinfo->out_color_space = JCS_RGB;
      break;
    case 4:
      job->out.mode = "CMYK";
      cinfo->out_color_space = JCS_CMYK;
      break;
    default:
      return SetUnsupported(job, components);
  }
  job->out.orientation = FindOrientation(cinfo);
  if (!Allocate(job, cinfo->image_width, cinfo->image_height, components)) return false;
  // Memory for libjpeg's own buffers (a progressive file keeps every coefficient: 2 bytes per
  // sample), derived from the pixel limit; libjpeg fails cleanly past it.
  const uint64_t pixels = std::min<uint64_t>(job->limits->max_pixels, uint64_t{1} << 37);
  cinfo->mem->max_memory_to_use = static_cast<long>(pixels * 8 + (uint64_t{64} << 20));
  jpeg_start_decompress(cinfo);
  if (cinfo->output_width != cinfo->image_width || cinfo->output_height != cinfo->image_height ||
      cinfo->output_components != components) {
    SetError(job, ErrorCode::kInternal, "jpeg: unexpected output geometry");
    return false;
  }
  for (JDIMENSION y = 0; y < cinfo->output_height; ++y) {
    JSAMPROW rows[1] = {job->row.data()};
    if (jpeg_read_scanlines(cinfo, rows, 1) != 1) {
      SetError(job, ErrorCode::kCorrupt, "jpeg: decoder stopped early");
      return false;
    }
    ConvertRow(job, components, job->out.image.row(y));
  }
  return true;
}

// What the probe reads from the frame header (plain numbers: ReadHeaderOnly may longjmp).
struct FrameFacts {
  uint64_t width = 0, height = 0;
  int components = 0;
  bool multiple_scans = false;
  uint64_t coefficient_bytes = 0;  // libjpeg's whole-image coefficient arrays (multi-scan only)
  uint64_t padded_width = 0;       // image width rounded up to whole MCUs
};

// Every libjpeg call of ProbeJpeg; see the file comment about longjmp.
bool ReadHeaderOnly(jpeg_decompress_struct* cinfo, ErrorManager* err, JpegJob* job,
                    FrameFacts* facts) {
  if (setjmp(err->jump)) return false;
  jpeg_create_decompress(cinfo);
  jpeg_mem_src(cinfo, job->data.data(), static_cast<unsigned long>(job->data.size()));
  // Reads the markers up to the first scan: the frame header and its component geometry
  // (width_in_blocks and height_in_blocks are set once the first SOS is reached).
  jpeg_read_header(cinfo, TRUE);
  facts->width = cinfo->image_width;
  facts->height = cinfo->image_height;
  facts->components = cinfo->num_components;
  facts->multiple_scans = jpeg_has_multiple_scans(cinfo) != 0;
  const uint64_t mcu_width = uint64_t{8} * std::max(cinfo->max_h_samp_factor, 1);
  facts->padded_width = (facts->width + mcu_width - 1) / mcu_width * mcu_width;
  for (int c = 0; c < cinfo->num_components; ++c) {
    const jpeg_component_info& comp = cinfo->comp_info[c];
    const uint64_t h = std::max(comp.h_samp_factor, 1), v = std::max(comp.v_samp_factor, 1);
    // jdcoefct.c: one JBLOCK (64 coefficients of 2 bytes) per block, rounded up to whole MCUs.
    const uint64_t blocks_wide = (uint64_t{comp.width_in_blocks} + h - 1) / h * h;
    const uint64_t blocks_high = (uint64_t{comp.height_in_blocks} + v - 1) / v * v;
    facts->coefficient_bytes += blocks_wide * blocks_high * sizeof(JBLOCK);
  }
  return true;
}

// Points cinfo's error handling at err: errors and a premature end of data longjmp back with
// their text in job, other warnings are counted, nothing is printed.
void UseErrorManager(jpeg_decompress_struct* cinfo, ErrorManager* err, JpegJob* job) {
  cinfo->err = jpeg_std_error(&err->pub);
  err->pub.error_exit = OnErrorExit;
  err->pub.emit_message = OnEmitMessage;
  err->pub.output_message = OnOutputMessage;
  err->job = job;
}

}  // namespace

Result<CodecHeader> ProbeJpeg(std::span<const uint8_t> bytes, const DecodeLimits& limits) {
  JpegJob job;
  job.data = bytes;
  job.limits = &limits;
  jpeg_decompress_struct cinfo{};
  ErrorManager err{};
  UseErrorManager(&cinfo, &err, &job);
  FrameFacts facts;
  const bool ok = ReadHeaderOnly(&cinfo, &err, &job, &facts);
  jpeg_destroy_decompress(&cinfo);
  if (!ok)
    return MakeError(job.code, job.error.empty() ? "jpeg: cannot read the header" : job.error);
  if (facts.components != 1 && facts.components != 3 && facts.components != 4) {
    SetUnsupported(&job, facts.components);
    return MakeError(job.code, job.error);
  }
  MINERU_RETURN_IF_ERROR(CheckDimensions("jpeg", static_cast<int64_t>(facts.width),
                                         static_cast<int64_t>(facts.height), limits));
  CodecHeader header{static_cast<int64_t>(facts.width), static_cast<int64_t>(facts.height), 0};
  // A file of several scans (progressive, or sequential with separate component scans) keeps
  // every coefficient until its last scan. Besides: the row groups of the main buffer,
  // upsampler and colour converter, at most 3 x 4 sample rows of 8 per component at full
  // width (128 bytes a column covers them), and ReadJpeg's sample row and CMYK row.
  header.scratch_bytes = (facts.multiple_scans ? facts.coefficient_bytes : 0) +
                         facts.padded_width * static_cast<uint64_t>(facts.components) * 128 +
                         facts.width * 8;
  return header;
}

Result<CodecOutput> DecodeJpeg(std::span<const uint8_t> bytes, const DecodeLimits& limits) {
  JpegJob job;
  job.data = bytes;
  job.limits = &limits;
  jpeg_decompress_struct cinfo{};
  ErrorManager err{};
  UseErrorManager(&cinfo, &err, &job);
  jpeg_progress_mgr progress{};
  progress.progress_monitor = OnProgress;
  const bool ok = ReadJpeg(&cinfo, &err, &progress, &job);
  jpeg_destroy_decompress(&cinfo);
  if (!ok) return MakeError(job.code, job.error.empty() ? "jpeg: decoding failed" : job.error);
  return std::move(job.out);
}

}  // namespace mineru::image::internal
