// SPDX-License-Identifier: Apache-2.0
// Step 2 of the Pro client (mineru-vl-utils 1.2.1 MinerUClientHelper.prepare_for_extract and
// post_process/table_image_processor.py): which blocks of a page get a recognition request, with
// which prompt, sampling and image. Applied to the page's block list in this order:
//
//   1. every image_caption lying >= 90 % inside an image, chart or image_block is deleted from
//      the list (later indices shift down);
//   2. image and chart blocks >= 90 % inside an image_block are "not standalone": kept, never
//      recognised;
//   3. the skip set: list, equation_block, image_block; image and chart when image analysis is
//      off; the caller's not_extract types;
//   4. images inside tables: for each table outside the skip set, every image (not chart) lying
//      >= 90 % inside it goes to the table that covers it most (ties: the smaller table), sorted
//      by (y1, x1); such images are marked absorbed_by_table and never recognised;
//   5. every other block outside the skip set, absorbed images and non-standalone visuals left
//      out, gets a request; image and chart blocks only when "eligible": w > 0.1 and h > 0.1, or
//      w * h > 0.01 (normalised, double precision);
//   6. its image: the page cut at the block's box (rounded edges, skipped under 1 pixel); tables
//      turned by their angle and their inner images masked (image/table_mask.h; the token map is
//      attached to the table block as table_image_tokens, JPEG data URIs); other blocks turned by
//      their angle; then resize_by_need;
//   7. prompt and sampling by type (RecognitionPromptPro, RecognitionSamplingPro).
//
// "Lying >= 90 % inside" is the client's cover ratio: intersection area / own area in double
// precision on the normalised boxes (an empty own box covers nothing).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "base/thread_pool.h"
#include "engine/sampling.h"
#include "image/image.h"
#include "pipeline/content_block.h"

namespace mineru::pipeline {

inline constexpr std::string_view kImageAnalysisPrompt = "\nImage Analysis:";

// One request of step 2.
struct BlockRequest {
  size_t block = 0;  // index into the page's block list (after step 1's deletions)
  std::string_view prompt;
  engine::SamplingParams sampling;
  image::RgbImage image;
};

struct ProRequestOptions {
  bool image_analysis = true;          // MinerU 3.4.4 turns it on (API/CLI field image_analysis)
  std::vector<BlockType> not_extract;  // e.g. table / equation when their recognition is off
};

// The Pro client's prompts: table "\nTable Recognition:", equation "\nFormula Recognition:",
// image and chart "\nImage Analysis:", every other type "\nText Recognition:".
std::string_view RecognitionPromptPro(BlockType type);
// Its sampling presets: table (presence 1.0, frequency 0.005), every other type (1.0, 0.05).
engine::SamplingParams RecognitionSamplingPro(BlockType type);

// The client's cover ratio of `inner` by `outer` (0 for an empty inner box).
double CoverRatio(const std::array<double, 4>& inner, const std::array<double, 4>& outer);

// The seed of the tokens that mask the images of the table at `index` of the page's block list
// (after step 1): it depends only on where the table is, so a page always gets the same tokens
// (image::TableImageTokens lists them).
uint64_t TableImageTokenSeed(const ContentBlock& table, size_t index);

// Steps 1-7 on `blocks` in place (deletions, absorbed marks, table token maps); returns the
// requests in list order. Crop or mask failures skip that block with a warning (warnings may be
// null); nothing else fails.
std::vector<BlockRequest> PrepareProRequests(const image::RgbImage& page,
                                             std::vector<ContentBlock>& blocks,
                                             const ProRequestOptions& options,
                                             std::vector<std::string>* warnings,
                                             ThreadPool* pool = nullptr);

}  // namespace mineru::pipeline
