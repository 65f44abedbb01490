// SPDX-License-Identifier: Apache-2.0
// One input file (a PDF or an image) through the whole pipeline to MinerU's output directory,
// as the MinerU release of the profile writes it (2509: MinerU 2.7.6; pro: MinerU 3.4.4,
// docs/PIPELINE.md):
//
//   <output>/<stem>/vlm/<stem>.md                  Markdown
//                      <stem>_content_list.json    flat list of items
//                      <stem>_content_list_v2.json items per page
//                      <stem>_middle.json          pages of blocks, lines and spans
//                      <stem>_model.json           the client's blocks
//                      <stem>_layout.pdf           the blocks drawn over the pages
//                      <stem>_origin.pdf           the input PDF (PDF inputs)
//                      <stem>_report.json          profile, failed pages and blocks, warnings
//                      (ours) images/<sha256>.jpg         crops of image, table, chart and equation
//                      spans
//                                                  (Pro: also the images inside tables)
//
// Pages stream: the main thread renders page after page while at most `pages_in_flight` pages
// are being extracted (each on its own thread, all of their requests in flight in the engine);
// a page's image is dropped as soon as its crops are written, so memory is bounded by the pages
// in flight, not by the document. A page that fails becomes an error entry (an empty page in
// the outputs and a line in `failed_pages`) while the rest of the document completes.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "base/thread_pool.h"
#include "image/decode.h"
#include "image/image_budget.h"
#include "image/pdf/render_options.h"
#include "pipeline/generator.h"
#include "pipeline/page_extractor.h"

namespace mineru::pipeline {

inline constexpr int kDefaultPagesInFlight = 4;
// Largest inline table image (a data URI in a Pro table's HTML) written to images/. The URIs come
// from the page's own masked images or from the model's answer, both far smaller; a range check,
// not a tunable limit.
inline constexpr uint64_t kMaxInlineTableImageBytes = uint64_t{64} << 20;

struct DocumentOptions {
  ExtractOptions extract;
  int pages_in_flight = kDefaultPagesInFlight;
  // 0-based page range, inclusive, as MinerU's -s/-e; unset: from the first / to the last page.
  std::optional<int> start_page;
  std::optional<int> end_page;
  pdf::RenderOptions render;
  image::DecodeOptions image_decode;
  // An image input (not a PDF): its header is probed first; decoded bytes over
  // max_request_decoded_bytes fail the document at once (kResourceExhausted naming the limit),
  // and the file, its pixels and the decoding scratch wait for room in in_flight (shared with
  // chat requests) before it is decoded; the pixels stay counted until the page is resized.
  // Rendered PDF pages are bounded by pages_in_flight instead.
  image::ImageBudget image_budget;
  bool table_merge = true;  // cross-page table merge (MINERU.md 3.7), with table recognition on
  // Pro: the model is asked whether the cells of tables continued across pages merge
  // (enable_cross_page_table_merge, MinerU 3.4.4's default), with table recognition on.
  bool model_table_merge = true;
  // When set and true, the document is abandoned: no further page is rendered, pages in flight
  // cancel their engine requests (ExtractOptions::cancel), nothing more is written, and
  // ParseDocument returns kCancelled. Overrides extract.cancel.
  std::shared_ptr<const std::atomic<bool>> cancel;
};

struct PageFailure {
  int page_idx = 0;
  std::string error;
};

struct DocumentResult {
  std::string output_dir;  // <output>/<stem>/vlm
  int pages = 0;           // pages in the range
  std::vector<PageFailure> failed_pages;
  int64_t failed_blocks = 0;
  int64_t requests = 0;
  int64_t request_retries = 0;  // a remote generator's retries, over every request
  int64_t cached_requests = 0;  // answers taken from ExtractOptions::cache
  // Answers cut at the token limit (kept, as MinerU keeps them): the report's
  // "truncated_requests".
  std::vector<TruncatedRequest> truncated;
  // Perceptual hash of each page in the range (image/phash.h; 0 for a page that could not be
  // rendered): a near-duplicate hint, written to the report as 16 hex digits.
  std::vector<uint64_t> page_hashes;
  int64_t generated_tokens = 0;
  int64_t table_merge_requests = 0;   // Pro: table pairs asked about (cross-page tables)
  int64_t table_merges = 0;           // Pro: answers that became a cell_merge
  std::vector<std::string> warnings;  // "page N: ..." per page, then document-level ones
  // Where the time went (seconds): pages rendered (or the image decoded and resized) on the
  // calling thread, each page's steps summed over pages, and writing the outputs.
  double render_seconds = 0;
  ExtractTimings extract;
  double assemble_seconds = 0;  // crops, MagicModel, merge, Markdown, JSON, files
  double total_seconds = 0;
};

struct DocumentProgress {
  int pages_done = 0;
  int pages_total = 0;
  int64_t blocks_done = 0;  // recognition requests answered in finished pages
  int64_t generated_tokens = 0;
  double last_page_seconds = 0;  // wall time of the page that just finished (extract + crops)
};

// Called after each page completes, one call at a time (from the page threads, under a lock).
using ProgressFn = std::function<void(const DocumentProgress&)>;

// Errors (the document as a whole): unreadable or unsupported input, a PDF the render helper
// cannot open, an empty page range, an output directory that cannot be written, cancellation
// (kCancelled).
Result<DocumentResult> ParseDocument(Generator& generator, const std::string& input_path,
                                     const std::string& output_root, const DocumentOptions& options,
                                     const ProgressFn& progress = {}, ThreadPool* pool = nullptr);

}  // namespace mineru::pipeline
