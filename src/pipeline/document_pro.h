// SPDX-License-Identifier: Apache-2.0
// The document-level steps of the Pro profile, between the pages and the output files:
//
//   1. cross-page tables (mineru-vl-utils 1.2.1 post_process/cross_page_table.py): every pair
//      of consecutive pages whose last and first tables may continue one another gets one
//      text-only request (cross_page_tables.h); a usable answer becomes the lower table's
//      cell_merge, on its client block (model.json) and on its middle.json table group. Upstream
//      looks only inside 64-page processing windows; here every consecutive pair is looked at.
//   2. MinerU 3.4.4's finalisation (finalize_middle_json): para_blocks = a copy of
//      preproc_blocks, the truncated-paragraph merge, then the cross-page table merge.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/json.h"
#include "pipeline/content_block.h"
#include "pipeline/generator.h"
#include "pipeline/request_cache.h"

namespace mineru::pipeline {

struct CrossPageTableOptions {
  std::optional<int64_t> max_new_tokens;
  // Longest one request may take (its engine deadline); unset: no limit.
  std::optional<std::chrono::milliseconds> request_timeout;
  RequestCache* cache = nullptr;
  int attempts = 2;
  // When set and true, requests in flight are cancelled (within kCancelPollInterval), none are
  // retried, and no cell_merge is applied.
  std::shared_ptr<const std::atomic<bool>> cancel;
};

struct CrossPageTableStats {
  int64_t candidates = 0;       // table pairs that got a merge request
  int64_t merged = 0;           // answers that became a cell_merge
  int64_t requests = 0;         // sent, retries included
  int64_t cached_requests = 0;  // answered from the cache
  int64_t generated_tokens = 0;
  int64_t request_retries = 0;  // a remote generator's retries
};

// Step 1. `pages[i]` are page i's post-processed client blocks and `pdf_info[i]` its middle.json
// page (preproc_blocks, group `index` = the block's position); both are updated in place. Failed
// requests leave their pair alone with a warning; a cancelled run changes nothing.
CrossPageTableStats DetectCrossPageTables(Generator& generator,
                                          std::vector<std::vector<ContentBlock>>& pages,
                                          Json& pdf_info, const CrossPageTableOptions& options,
                                          std::vector<std::string>* warnings);

// Step 2 on MinerU 3.4.4 pages; `table_merge`: the cross-page table merge is on (table
// recognition on and MINERU_TABLE_MERGE_ENABLE).
void FinalizeMiddleJsonPro(Json& pdf_info, bool table_merge);

// model.json's blocks of one page: {type, bbox, angle, content}, plus for the Pro profile
// merge_prev (text), sub_type (analysed image/chart) and cell_merge (tables) when set (the 2509
// client never sets them).
Json ModelJsonPage(const std::vector<ContentBlock>& blocks);

}  // namespace mineru::pipeline
