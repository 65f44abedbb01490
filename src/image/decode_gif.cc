// SPDX-License-Identifier: Apache-2.0
// GIF, first frame, through giflib's record-level API (never DGifSlurp, which would decode
// every frame of an animation). The frame comes out as Pillow 9.4's GifImagePlugin builds it:
//   - the canvas is the logical screen, grown to hold the frame if the frame reaches past it;
//   - outside the frame the canvas holds the transparent index of the last graphic control
//     extension before the frame that sets one, else index 0;
//   - mode "P" with the local colour table, else the global one ("L", indices as grey, when
//     there is neither); entries past the table read Pillow's default grey ramp.
#include <gif_lib.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "image/codecs.h"
#include "image/pixel_modes.h"

namespace mineru::image::internal {
namespace {

struct Source {
  std::span<const uint8_t> data;
  size_t pos = 0;
};

int OnRead(GifFileType* gif, GifByteType* out, int length) {
  auto* src = static_cast<Source*>(gif->UserData);
  const size_t n = std::min(static_cast<size_t>(std::max(length, 0)), src->data.size() - src->pos);
  std::memcpy(out, src->data.data() + src->pos, n);
  src->pos += n;
  return static_cast<int>(n);
}

tl::unexpected<Error> GifError(int code, std::string_view what) {
  const char* text = GifErrorString(code);
  const bool truncated = code == D_GIF_ERR_READ_FAILED || code == D_GIF_ERR_EOF_TOO_SOON;
  return Fail(ErrorCode::kCorrupt, "gif: {}: {}", what,
              truncated ? "file is truncated" : (text != nullptr ? text : "unknown error"));
}

struct GifCloser {
  GifFileType* gif;
  ~GifCloser() {
    int error = 0;
    if (gif != nullptr) DGifCloseFile(gif, &error);
  }
};

Status ReadFrame(GifFileType* gif, int transparency, const DecodeLimits& limits, CodecOutput& out) {
  const GifImageDesc& desc = gif->Image;
  if (desc.Left < 0 || desc.Top < 0 || desc.Width < 1 || desc.Height < 1) {
    return Fail(ErrorCode::kCorrupt, "gif: frame {} x {} at ({}, {}) is empty", desc.Width,
                desc.Height, desc.Left, desc.Top);
  }
  const int64_t width = std::max<int64_t>(gif->SWidth, int64_t{desc.Left} + desc.Width);
  const int64_t height = std::max<int64_t>(gif->SHeight, int64_t{desc.Top} + desc.Height);
  MINERU_ASSIGN_OR_RETURN(out.image, AllocateImage("gif", width, height, limits));
  const ColorMapObject* map = desc.ColorMap != nullptr ? desc.ColorMap : gif->SColorMap;
  out.mode = map != nullptr ? "P" : "L";
  Palette palette;
  if (map != nullptr) {
    for (int i = 0; i < map->ColorCount && i < 256; ++i) {
      palette.Set(i, map->Colors[i].Red, map->Colors[i].Green, map->Colors[i].Blue);
    }
  }
  std::vector<uint8_t> indices(static_cast<size_t>(width * height),
                               static_cast<uint8_t>(transparency >= 0 ? transparency : 0));
  std::vector<GifPixelType> line(static_cast<size_t>(desc.Width));
  auto read_row = [&](int64_t y) -> Status {
    if (DGifGetLine(gif, line.data(), desc.Width) == GIF_ERROR) {
      return GifError(gif->Error, "image data");
    }
    std::memcpy(&indices[static_cast<size_t>((desc.Top + y) * width + desc.Left)], line.data(),
                line.size());
    return OkStatus();
  };
  if (desc.Interlace) {
    static constexpr int kStart[4] = {0, 4, 2, 1}, kStep[4] = {8, 8, 4, 2};
    for (int pass = 0; pass < 4; ++pass) {
      for (int64_t y = kStart[pass]; y < desc.Height; y += kStep[pass]) {
        MINERU_RETURN_IF_ERROR(read_row(y));
      }
    }
  } else {
    for (int64_t y = 0; y < desc.Height; ++y) MINERU_RETURN_IF_ERROR(read_row(y));
  }
  PaletteToRgb(indices.data(), indices.size(), palette, out.image.pixels.data());
  return OkStatus();
}

// Reads records up to the first image descriptor, skipping extensions; `transparency` gets the
// transparent index of the last graphic control extension before it that sets one (else -1).
Status FindFirstFrame(GifFileType* gif, int* transparency) {
  *transparency = -1;
  for (;;) {
    GifRecordType type = UNDEFINED_RECORD_TYPE;
    if (DGifGetRecordType(gif, &type) == GIF_ERROR) return GifError(gif->Error, "record");
    if (type == TERMINATE_RECORD_TYPE) {
      return Fail(ErrorCode::kCorrupt, "gif: the file holds no image");
    }
    if (type == EXTENSION_RECORD_TYPE) {
      int code = 0;
      GifByteType* block = nullptr;
      if (DGifGetExtension(gif, &code, &block) == GIF_ERROR) {
        return GifError(gif->Error, "extension");
      }
      // Graphic control extension: packed flags, delay (2 bytes), transparent index.
      if (code == GRAPHICS_EXT_FUNC_CODE && block != nullptr && block[0] >= 4 &&
          (block[1] & 1) != 0) {
        *transparency = block[4];
      }
      while (block != nullptr) {
        if (DGifGetExtensionNext(gif, &block) == GIF_ERROR) {
          return GifError(gif->Error, "extension");
        }
      }
      continue;
    }
    if (type == IMAGE_DESC_RECORD_TYPE) {
      if (DGifGetImageDesc(gif) == GIF_ERROR) return GifError(gif->Error, "image descriptor");
      return OkStatus();
    }
  }
}

}  // namespace

Result<CodecHeader> ProbeGif(std::span<const uint8_t> bytes, const DecodeLimits& limits) {
  Source source{bytes, 0};
  int error = 0;
  GifCloser closer{DGifOpen(&source, OnRead, &error)};
  GifFileType* gif = closer.gif;
  if (gif == nullptr) return GifError(error, "header");
  MINERU_RETURN_IF_ERROR(CheckDimensions("gif", gif->SWidth, gif->SHeight, limits));
  // The logical screen alone would understate a file whose first frame reaches past it: the
  // canvas grows to hold the frame (ReadFrame), so the frame's descriptor is read too.
  int transparency = -1;
  MINERU_RETURN_IF_ERROR(FindFirstFrame(gif, &transparency));
  const GifImageDesc& desc = gif->Image;
  if (desc.Left < 0 || desc.Top < 0 || desc.Width < 1 || desc.Height < 1) {
    return Fail(ErrorCode::kCorrupt, "gif: frame {} x {} at ({}, {}) is empty", desc.Width,
                desc.Height, desc.Left, desc.Top);
  }
  const int64_t width = std::max<int64_t>(gif->SWidth, int64_t{desc.Left} + desc.Width);
  const int64_t height = std::max<int64_t>(gif->SHeight, int64_t{desc.Top} + desc.Height);
  MINERU_RETURN_IF_ERROR(CheckDimensions("gif", width, height, limits));
  // ReadFrame's palette indices of the whole canvas and one line of the frame.
  return CodecHeader{width, height,
                     static_cast<uint64_t>(width * height) + static_cast<uint64_t>(desc.Width)};
}

Result<CodecOutput> DecodeGif(std::span<const uint8_t> bytes, const DecodeLimits& limits) {
  Source source{bytes, 0};
  int error = 0;
  GifCloser closer{DGifOpen(&source, OnRead, &error)};
  GifFileType* gif = closer.gif;
  if (gif == nullptr) return GifError(error, "header");
  // The screen itself is checked first: Pillow sizes its image from it.
  MINERU_RETURN_IF_ERROR(CheckDimensions("gif", gif->SWidth, gif->SHeight, limits));
  int transparency = -1;
  MINERU_RETURN_IF_ERROR(FindFirstFrame(gif, &transparency));
  CodecOutput out;
  MINERU_RETURN_IF_ERROR(ReadFrame(gif, transparency, limits, out));
  return out;
}

}  // namespace mineru::image::internal
