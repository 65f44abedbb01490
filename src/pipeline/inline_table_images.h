// SPDX-License-Identifier: Apache-2.0
// Images embedded in table HTML as data URIs (MinerU 3.4.4
// mineru/backend/utils/html_image_utils.py): the MagicModel writes each to the output's image
// folder and points the <img> at the file. The finding and rewriting is here; decoding and
// writing belong to whoever owns the output directory (an InlineImageFn).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace mineru::pipeline {

// Writes one inline table image (the whole data URI as found in the HTML) and returns the file
// name, relative to the output's image folder ("<sha256 of the data URI>.jpg", ".png", ...), or
// "" when nothing was written (the attribute is then left as it is).
using InlineImageFn = std::function<std::string(std::string_view data_uri)>;

// Every src="data:image/..." attribute (double quotes, as MinerU's regex
// src="(data:image/[^"]+)" finds them, left to right) whose image `inline_image` writes becomes
// src="<file name>". HTML without "base64," and an empty `inline_image` leave the HTML as it is.
std::string RewriteInlineTableImages(std::string_view html, const InlineImageFn& inline_image);

struct InlineTableImage {
  std::string file_name;  // "<sha256 hex of the whole data URI>.<ext>"
  std::vector<uint8_t> bytes;
};

// What an InlineImageFn writes for a data URI, as MinerU names it: the URI must read
// "data:image/FMT;base64,PAYLOAD" (FMT without ';', PAYLOAD non-empty); the extension is FMT
// lower-cased up to its first '+', "jpeg" becoming "jpg" ("svg+xml" -> "svg").
// Deviations, all failing with a Status the caller reports as a warning: WMF/EMF (FMT wmf,
// x-wmf, emf or x-emf), which MinerU first renders through LibreOffice, are refused
// (kUnsupported); an extension other than 1-16 of [a-z0-9-] is refused (kInvalidArgument;
// MinerU would use it as a path suffix); the payload is decoded strictly (standard alphabet,
// padding, no whitespace; kCorrupt), where Python's b64decode skips stray characters; payloads
// decoding to more than max_bytes fail with kResourceExhausted.
Result<InlineTableImage> DecodeInlineTableImage(std::string_view data_uri, uint64_t max_bytes);

}  // namespace mineru::pipeline
