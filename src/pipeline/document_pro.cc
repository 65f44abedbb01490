// SPDX-License-Identifier: Apache-2.0
#include "pipeline/document_pro.h"

#include <fmt/format.h>

#include "engine/sampling.h"
#include "pipeline/cross_page_tables.h"
#include "pipeline/page_extractor.h"
#include "pipeline/para_merge.h"
#include "pipeline/sampling_presets.h"
#include "pipeline/table_merge.h"

namespace mineru::pipeline {
namespace {

void Warn(std::vector<std::string>* warnings, std::string message) {
  if (warnings != nullptr) warnings->push_back(std::move(message));
}

// The text-only request of a table pair: the client's system turn is the template's default,
// the prompt alone in the user turn, the [cross_page_table_merge] sampling (the default preset),
// no priority.
engine::Request MergeRequest(const std::string& prompt, const CrossPageTableOptions& options) {
  engine::Request request;
  request.messages = {{"user", {text::ChatPart::Text(prompt)}}};
  request.sampling = MineruDefaultSampling();
  request.max_new_tokens = options.max_new_tokens;
  if (options.request_timeout) request.deadline = engine::Clock::now() + *options.request_timeout;
  return request;
}

bool Cancelled(const CrossPageTableOptions& options) {
  return options.cancel && options.cancel->load(std::memory_order_relaxed);
}

// The middle.json table group of page `page` made from client block `block`.
Json* TableGroup(Json& pdf_info, size_t page, size_t block) {
  if (!pdf_info.is_array() || page >= pdf_info.size() || !pdf_info[page].is_object()) {
    return nullptr;
  }
  auto blocks = pdf_info[page].find("preproc_blocks");
  if (blocks == pdf_info[page].end() || !blocks->is_array()) return nullptr;
  for (Json& group : *blocks) {
    if (!group.is_object()) continue;
    auto type = group.find("type");
    auto index = group.find("index");
    if (type != group.end() && *type == "table" && index != group.end() &&
        index->is_number_integer() && index->get<int64_t>() == static_cast<int64_t>(block)) {
      return &group;
    }
  }
  return nullptr;
}

}  // namespace

CrossPageTableStats DetectCrossPageTables(Generator& generator,
                                          std::vector<std::vector<ContentBlock>>& pages,
                                          Json& pdf_info, const CrossPageTableOptions& options,
                                          std::vector<std::string>* warnings) {
  CrossPageTableStats stats;
  const std::vector<TableMergeCandidate> candidates = FindCrossPageTableCandidates(pages);
  stats.candidates = static_cast<int64_t>(candidates.size());
  struct Pending {
    const TableMergeCandidate* candidate;
    std::optional<std::string> key;
    std::optional<engine::RequestHandle> handle;
    std::optional<std::string> answer;
    std::string error;
  };
  std::vector<Pending> pending;
  for (const TableMergeCandidate& c : candidates) {
    Pending p{&c, std::nullopt, std::nullopt, std::nullopt, {}};
    if (options.cache) {
      // A text-only request: the empty image makes its key distinct from every image request.
      p.key = RequestCacheKey(image::RgbImage{}, c.prompt, MineruDefaultSampling(),
                              options.max_new_tokens);
      if (p.key) {
        if (std::optional<std::string> cached = options.cache->Get(*p.key)) {
          p.answer = std::move(*cached);
          ++stats.cached_requests;
        }
      }
    }
    pending.push_back(std::move(p));
  }
  const int attempts = std::max(1, options.attempts);
  for (int attempt = 0; attempt < attempts && !Cancelled(options); ++attempt) {
    for (Pending& p : pending) {
      if (p.answer) continue;
      ++stats.requests;
      auto handle = generator.Submit(MergeRequest(p.candidate->prompt, options));
      if (handle) {
        p.handle = std::move(*handle);
      } else {
        p.handle.reset();
        p.error = handle.error().ToString();
      }
    }
    for (Pending& p : pending) {
      if (p.answer || !p.handle) continue;
      engine::GenerationResult result = WaitUnlessCancelled(*p.handle, options.cancel);
      p.handle.reset();
      stats.generated_tokens += result.usage.completion_tokens;
      stats.request_retries += result.retries;
      if (result.finish_reason == engine::FinishReason::kStop ||
          result.finish_reason == engine::FinishReason::kLength) {
        if (p.key) options.cache->Put(*p.key, result.text);
        p.answer = std::move(result.text);
      } else {
        p.error = result.error.empty() ? std::string(engine::FinishReasonName(result.finish_reason))
                                       : result.error;
      }
    }
  }
  if (Cancelled(options)) return stats;
  for (Pending& p : pending) {
    const TableMergeCandidate& c = *p.candidate;
    if (!p.answer) {
      Warn(warnings, fmt::format("cross-page table merge request for page {} / {} failed: {}",
                                 c.upper_page + 1, c.lower_page + 1, p.error));
      continue;
    }
    std::optional<std::vector<int>> flags = ParseCellMergeAnswer(*p.answer, c.prev_segments.size());
    if (!flags) continue;  // the client ignores an answer it cannot read
    std::vector<int> cell_merge = ExpandCellMerge(*flags, c.prev_segments);
    if (c.lower_page < pages.size() && c.lower_block < pages[c.lower_page].size()) {
      pages[c.lower_page][c.lower_block].cell_merge = cell_merge;
    }
    // As MiddlePagePro copies a client block's cell_merge: onto the group and its body.
    if (Json* group = TableGroup(pdf_info, c.lower_page, c.lower_block)) {
      (*group)["cell_merge"] = cell_merge;
      auto sub = group->find("blocks");
      if (sub != group->end() && sub->is_array()) {
        for (Json& body : *sub) {
          if (body.is_object() && body.value("type", "") == "table_body") {
            body["cell_merge"] = cell_merge;
          }
        }
      }
    }
    ++stats.merged;
  }
  return stats;
}

void FinalizeMiddleJsonPro(Json& pdf_info, bool table_merge) {
  if (!pdf_info.is_array()) return;
  for (Json& page : pdf_info) {
    if (!page.is_object()) continue;
    auto pre = page.find("preproc_blocks");
    page["para_blocks"] = (pre != page.end() && pre->is_array()) ? *pre : Json::array();
  }
  MergeTruncatedParagraphs(pdf_info);
  if (table_merge) MergeCrossPageTables(pdf_info, TableMergeRules{.mineru_344 = true});
}

Json ModelJsonPage(const std::vector<ContentBlock>& blocks) {
  Json page = Json::array();
  for (const ContentBlock& b : blocks) {
    Json block{{"type", BlockTypeName(b.type)},
               {"bbox", {b.bbox[0], b.bbox[1], b.bbox[2], b.bbox[3]}},
               {"angle", b.angle ? Json(*b.angle) : Json(nullptr)},
               {"content", b.content ? Json(*b.content) : Json(nullptr)}};
    if (b.merge_prev) block["merge_prev"] = *b.merge_prev;
    if (b.sub_type) block["sub_type"] = *b.sub_type;
    if (b.cell_merge) block["cell_merge"] = *b.cell_merge;
    page.push_back(std::move(block));
  }
  return page;
}

}  // namespace mineru::pipeline
