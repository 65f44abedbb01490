// SPDX-License-Identifier: Apache-2.0
// A small scripted page for the task tests (tests/tasks, tests/service): a layout of a title, a
// text block and an image (the two first are recognised, the image is cropped), the text every
// recognition request gets, and plain PNG pages.
#pragma once

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <string_view>

#include "image/encode.h"
#include "image/image.h"
#include "pipeline/block_requests.h"
#include "scripted_generator.h"

namespace mineru::pipeline::testing {

inline constexpr std::string_view kSimpleLayout =
    "<|box_start|>100 050 900 100<|box_end|><|ref_start|>title<|ref_end|><|rotate_up|>\n"
    "<|box_start|>100 120 900 200<|box_end|><|ref_start|>text<|ref_end|><|rotate_up|>\n"
    "<|box_start|>100 250 900 450<|box_end|><|ref_start|>image<|ref_end|><|rotate_up|>";
inline constexpr std::string_view kSimpleText = "Words on the page.";

// The script: kSimpleLayout for layout requests, kSimpleText for every other.
inline std::optional<std::string> SimplePageAnswer(const ScriptedCall& call) {
  if (call.prompt == kLayoutPrompt) return std::string(kSimpleLayout);
  return std::string(kSimpleText);
}

// A uniformly grey page as PNG bytes.
inline std::string PlainPng(int width, int height, uint8_t shade) {
  auto page = image::MakeImage(width, height, shade, shade, shade);
  EXPECT_TRUE(page);
  auto png = image::EncodePng(*page);
  EXPECT_TRUE(png);
  return png ? std::string(png->begin(), png->end()) : std::string();
}

}  // namespace mineru::pipeline::testing
