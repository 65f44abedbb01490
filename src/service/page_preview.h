// SPDX-License-Identifier: Apache-2.0
// A page of a task's input as a small JPEG, for the web UI's page view (its layout boxes are
// drawn from model.json, whose boxes are fractions of the page, so any scale will do).
#pragma once

#include <string>

#include "base/status.h"
#include "image/pdf/render_options.h"

namespace mineru::service {

// Long side of a preview, in pixels.
inline constexpr int kPreviewLongSide = 1024;

// Page `page` (0-based) of a PDF, or the image itself (page 0), scaled so that its long side is
// at most long_side (never upscaled), as JPEG bytes. kNotFound for a page past the end.
// `render` supplies the helper path and the render limits.
Result<std::string> RenderPreview(const std::string& input_path, int page,
                                  const pdf::RenderOptions& render,
                                  int long_side = kPreviewLongSide);

}  // namespace mineru::service
