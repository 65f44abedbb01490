// SPDX-License-Identifier: Apache-2.0
#include "pipeline/page_extractor.h"

#include <fmt/format.h>

#include "image/mineru_crops.h"
#include "pipeline/block_requests.h"
#include "pipeline/block_requests_pro.h"
#include "pipeline/layout_parser.h"
#include "pipeline/post_process_pro.h"

namespace mineru::pipeline {
namespace {

// The client's request: the default system turn, then the image and the task prompt.
engine::Request ImageRequest(image::RgbImage image, std::string_view prompt,
                             const engine::SamplingParams& sampling,
                             const ExtractOptions& options) {
  engine::Request request;
  request.messages = {
      {"user", {text::ChatPart::Image({}), text::ChatPart::Text(std::string(prompt))}}};
  engine::ImageInput input;
  input.rgb = std::move(image);
  request.images.push_back(std::move(input));
  request.sampling = sampling;
  request.priority = options.priority;
  request.max_new_tokens = options.max_new_tokens;
  if (options.request_timeout) request.deadline = engine::Clock::now() + *options.request_timeout;
  return request;
}

// A finished request is usable when it stopped or hit its length (MinerU accepts truncation).
bool Usable(const engine::GenerationResult& result) {
  return result.finish_reason == engine::FinishReason::kStop ||
         result.finish_reason == engine::FinishReason::kLength;
}

double Since(engine::Clock::time_point start) {
  return std::chrono::duration<double>(engine::Clock::now() - start).count();
}

void AddRequestTimings(const engine::GenerationResult& result, ExtractTimings& t) {
  t.queued += result.timings.queued;
  t.vision += result.timings.vision;
  t.prefill += result.timings.prefill;
  t.decode += result.timings.decode;
  t.requests += result.timings.total;
}

std::string Describe(const engine::GenerationResult& result) {
  return result.error.empty()
             ? std::string(engine::FinishReasonName(result.finish_reason))
             : fmt::format("{}: {}", engine::FinishReasonName(result.finish_reason), result.error);
}

bool Cancelled(const ExtractOptions& options) {
  return options.cancel && options.cancel->load(std::memory_order_relaxed);
}

// Step 2 of the 2509 client (block_requests.h): every recognised type, its upright crop.
std::vector<BlockRequest> Prepare2509Requests(const image::RgbImage& page,
                                              const std::vector<ContentBlock>& blocks,
                                              const std::vector<BlockType>& not_extract,
                                              std::vector<std::string>* warnings,
                                              ThreadPool* pool) {
  std::vector<BlockRequest> requests;
  for (size_t i = 0; i < blocks.size(); ++i) {
    if (!IsRecognised(blocks[i].type, not_extract)) continue;
    auto crop =
        image::PrepareBlockImage(page, blocks[i].bbox, blocks[i].angle.value_or(0), {}, pool);
    if (!crop) {
      warnings->push_back(fmt::format("block {} ({}): crop failed: {}", i,
                                      BlockTypeName(blocks[i].type), crop.error().ToString()));
      continue;
    }
    if (!*crop) continue;  // empty after rounding: MinerU skips it
    requests.push_back({i, RecognitionPrompt(blocks[i].type), RecognitionSampling(blocks[i].type),
                        std::move(**crop)});
  }
  return requests;
}

tl::unexpected<Error> CancelledError() {
  return Fail(ErrorCode::kCancelled, "page extraction cancelled");
}

}  // namespace

Result<PageExtraction> ExtractPage(Generator& generator, const image::RgbImage& page,
                                   const ExtractOptions& options, ThreadPool* pool) {
  PageExtraction out;
  const int attempts = std::max(1, options.block_attempts);

  // Step 1: layout.
  const engine::Clock::time_point layout_start = engine::Clock::now();
  MINERU_ASSIGN_OR_RETURN(image::RgbImage thumbnail, image::PrepareLayoutImage(page, pool));
  std::string last_error;
  std::optional<engine::GenerationResult> layout;
  const std::optional<std::string> layout_key =
      options.cache
          ? RequestCacheKey(thumbnail, kLayoutPrompt, LayoutSampling(), options.max_new_tokens)
          : std::nullopt;
  if (layout_key) {
    if (std::optional<std::string> cached = options.cache->Get(*layout_key)) {
      layout.emplace();
      layout->finish_reason = engine::FinishReason::kStop;
      layout->text = std::move(*cached);
      ++out.cached_requests;
    }
  }
  for (int attempt = 0; attempt < attempts && !layout; ++attempt) {
    if (Cancelled(options)) return CancelledError();
    auto handle =
        generator.Submit(ImageRequest(thumbnail, kLayoutPrompt, LayoutSampling(), options));
    if (!handle) {
      last_error = handle.error().ToString();
      continue;
    }
    engine::GenerationResult result = WaitUnlessCancelled(*handle, options.cancel);
    out.generated_tokens += result.usage.completion_tokens;
    out.request_retries += result.retries;
    AddRequestTimings(result, out.timings);
    if (Usable(result)) {
      if (layout_key) options.cache->Put(*layout_key, result.text);
      layout = std::move(result);
    } else {
      last_error = Describe(result);
    }
  }
  if (Cancelled(options)) return CancelledError();
  if (!layout) {
    return Fail(ErrorCode::kUnavailable, "layout detection failed after {} attempts: {}", attempts,
                last_error);
  }
  if (layout->finish_reason == engine::FinishReason::kLength) {
    out.warnings.push_back("layout output truncated at the token limit");
    out.truncated.push_back({-1, std::nullopt, "layout"});
  }
  out.timings.layout_wall = Since(layout_start);
  out.layout_output = layout->text;
  const bool pro = options.profile == Profile::kPro;
  std::vector<ContentBlock> blocks =
      ParseLayout(layout->text, LayoutRulesFor(options.profile), &out.warnings);

  // Step 2: one request per recognised block, all in flight together.
  std::vector<BlockType> not_extract;
  if (!options.formula) not_extract.push_back(BlockType::kEquation);
  if (!options.table) not_extract.push_back(BlockType::kTable);
  std::vector<BlockRequest> requests =
      pro ? PrepareProRequests(page, blocks, {options.image_analysis, not_extract}, &out.warnings,
                               pool)
          : Prepare2509Requests(page, blocks, not_extract, &out.warnings, pool);
  struct Pending {
    BlockRequest request;
    std::optional<engine::RequestHandle> handle;
    std::string error;
    std::optional<std::string> cache_key;
  };
  std::vector<Pending> pending;
  for (BlockRequest& r : requests) {
    std::optional<std::string> key;
    if (options.cache) {
      key = RequestCacheKey(r.image, r.prompt, r.sampling, options.max_new_tokens);
      if (key) {
        if (std::optional<std::string> cached = options.cache->Get(*key)) {
          blocks[r.block].content = std::move(*cached);
          ++out.cached_requests;
          continue;
        }
      }
    }
    pending.push_back({std::move(r), std::nullopt, {}, std::move(key)});
  }
  auto submit = [&](Pending& p) {
    ++out.requests;
    auto handle = generator.Submit(
        ImageRequest(p.request.image, p.request.prompt, p.request.sampling, options));
    if (handle) {
      p.handle = *handle;
    } else {
      p.handle.reset();
      p.error = handle.error().ToString();
    }
  };
  const engine::Clock::time_point blocks_start = engine::Clock::now();
  for (Pending& p : pending) submit(p);
  for (int attempt = 1; attempt <= attempts; ++attempt) {
    std::vector<Pending*> retry;
    for (Pending& p : pending) {
      if (blocks[p.request.block].content) continue;
      if (p.handle) {
        engine::GenerationResult result = WaitUnlessCancelled(*p.handle, options.cancel);
        out.generated_tokens += result.usage.completion_tokens;
        out.request_retries += result.retries;
        AddRequestTimings(result, out.timings);
        if (Usable(result)) {
          if (result.finish_reason == engine::FinishReason::kLength) {
            out.truncated.push_back(
                {-1, p.request.block, std::string(BlockTypeName(blocks[p.request.block].type))});
          }
          if (p.cache_key) options.cache->Put(*p.cache_key, result.text);
          blocks[p.request.block].content = result.text;
          continue;
        }
        p.error = Describe(result);
      }
      retry.push_back(&p);
    }
    if (Cancelled(options)) return CancelledError();
    if (attempt == attempts) {
      for (Pending* p : retry) {
        ++out.failed_blocks;
        blocks[p->request.block].content = std::string();
        out.warnings.push_back(
            fmt::format("block {} ({}): recognition failed after {} attempts: {}", p->request.block,
                        BlockTypeName(blocks[p->request.block].type), attempts, p->error));
      }
      break;
    }
    for (Pending* p : retry) submit(*p);
  }

  out.timings.blocks_wall = Since(blocks_start);
  const engine::Clock::time_point post_start = engine::Clock::now();
  out.blocks = pro ? PostProcessPro(std::move(blocks), options.post_process, &out.warnings)
                   : PostProcess(std::move(blocks), options.post_process, &out.warnings);
  out.timings.post_process = Since(post_start);
  return out;
}

engine::GenerationResult WaitUnlessCancelled(
    engine::RequestHandle& handle, const std::shared_ptr<const std::atomic<bool>>& cancel) {
  if (!cancel) return handle.Wait();
  bool cancel_sent = false;
  while (true) {
    if (std::optional<engine::GenerationResult> r = handle.WaitFor(kCancelPollInterval)) {
      return std::move(*r);
    }
    if (!cancel_sent && cancel->load(std::memory_order_relaxed)) {
      handle.Cancel();
      cancel_sent = true;
    }
  }
}

}  // namespace mineru::pipeline
