// SPDX-License-Identifier: Apache-2.0
// MinerU2.5's two steps on one page image: the layout request on the page resized to 1036 x 1036,
// the layout answer parsed into blocks, one recognition request per block on its upright crop of
// the full-resolution page (all of a page's requests in flight together), then the client's
// post-processing -- each by the rules of the profile's client (2509: mineru-vl-utils 0.1.22,
// block_requests.h, post_process.h; pro: mineru-vl-utils 1.2.1, block_requests_pro.h,
// post_process_pro.h).
//
// Failure is local: a block whose request fails, times out or is refused is tried again once
// (options.block_attempts), then left without content and named in the warnings; only a layout
// step that fails every attempt fails the page. A cancelled page (ExtractOptions::cancel) stops
// at once and returns kCancelled.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "base/thread_pool.h"
#include "image/image.h"
#include "pipeline/content_block.h"
#include "pipeline/generator.h"
#include "pipeline/post_process.h"
#include "pipeline/profile.h"
#include "pipeline/request_cache.h"

namespace mineru::pipeline {

struct ExtractOptions {
  // Which client's rules: layout grammar, step-2 selection and post-processing.
  Profile profile = Profile::k2509;
  bool formula = true;  // recognise equations (off: equation blocks keep no content)
  bool table = true;    // recognise tables (off: table blocks keep no content)
  // Pro: image and chart blocks get an "Image Analysis" request (MinerU 3.4.4's default).
  bool image_analysis = true;
  int block_attempts = 2;
  // Longest a single request may take (its engine deadline); unset: no limit.
  std::optional<std::chrono::milliseconds> request_timeout;
  int32_t priority = 0;  // engine priority of this page's requests (lower first)
  // New tokens per request at most; unset: the model's remaining context (what MinerU's client
  // leaves to the server). A cap bounds the time a degenerate answer can take.
  std::optional<int64_t> max_new_tokens;
  PostProcessOptions post_process;
  // Answers kept by content (pipeline/request_cache.h); null: every request goes to the model.
  // A hit skips the request; every usable answer (stop or length) of a deterministic request
  // is stored.
  RequestCache* cache = nullptr;
  // When set and true, the page is abandoned: requests in flight are cancelled within
  // kCancelPollInterval, none are retried, and ExtractPage returns kCancelled.
  std::shared_ptr<const std::atomic<bool>> cancel;
};

// How often a page waiting for the engine looks at ExtractOptions::cancel.
inline constexpr std::chrono::milliseconds kCancelPollInterval{50};

// Seconds. Request figures are sums over the page's requests of the engine's own timings
// (requests overlap, so these are request-seconds, not wall time).
struct ExtractTimings {
  double layout_wall = 0;   // layout step, submit to answer
  double blocks_wall = 0;   // recognition step, first submit to last answer
  double post_process = 0;  // client post-processing
  double queued = 0, vision = 0, prefill = 0, decode = 0;  // summed over requests
  double requests = 0;  // submission to result, summed over requests (a remote one's latency)

  ExtractTimings& operator+=(const ExtractTimings& o) {
    layout_wall += o.layout_wall;
    blocks_wall += o.blocks_wall;
    post_process += o.post_process;
    queued += o.queued;
    vision += o.vision;
    prefill += o.prefill;
    decode += o.decode;
    requests += o.requests;
    return *this;
  }
};

// A request whose answer was cut at the token limit (finish_reason "length"): kept, as MinerU
// keeps it, and named in the report.
struct TruncatedRequest {
  int page_idx = -1;            // set by the document (ExtractPage does not know it)
  std::optional<size_t> block;  // the block's index in the layout answer; none: the layout
  std::string type;             // the block's type name, or "layout"
};

struct PageExtraction {
  std::string layout_output;         // the layout step's raw answer
  std::vector<ContentBlock> blocks;  // post-processed, in reading order
  std::vector<std::string> warnings;
  int64_t requests = 0;         // recognition requests sent, retries included
  int64_t cached_requests = 0;  // layout and recognition answers taken from options.cache
  int64_t failed_blocks = 0;    // blocks left without content after every attempt
  int64_t generated_tokens = 0;
  int64_t request_retries = 0;  // a remote generator's retries (GenerationResult::retries)
  std::vector<TruncatedRequest> truncated;
  ExtractTimings timings;
};

// Handle::Wait that cancels the request once *cancel turns true (the engine then ends it at its
// next step, so this returns within kCancelPollInterval plus one engine iteration).
engine::GenerationResult WaitUnlessCancelled(
    engine::RequestHandle& handle, const std::shared_ptr<const std::atomic<bool>>& cancel);

Result<PageExtraction> ExtractPage(Generator& generator, const image::RgbImage& page,
                                   const ExtractOptions& options, ThreadPool* pool = nullptr);

}  // namespace mineru::pipeline
