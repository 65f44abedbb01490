// SPDX-License-Identifier: Apache-2.0
// Stored document outputs, as a node reads them back from Redis: one document
// (cache/document_codec.h ParseDocumentOutputs, "MDOC") or a shared task's outputs
// (tasks/task_store.h ParseTaskOutputs, "MTSK", which holds documents). The magic picks one.
// Invariants: the encodings are canonical (what parses serializes to the same bytes) and image
// names are plain file names, sorted and unique.
#include <cstddef>
#include <cstdint>

#include "cache/document_codec.h"
#include "fuzz/fuzz_util.h"
#include "tasks/task_store.h"

namespace {

using namespace mineru;

void CheckDocument(const jobs::DocumentOutputs& outputs) {
  for (size_t i = 0; i < outputs.images.size(); ++i) {
    MINERU_CHECK(jobs::IsPlainFileName(outputs.images[i].first));
    MINERU_CHECK(i == 0 || outputs.images[i - 1].first < outputs.images[i].first);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes = fuzz::AsText(data, size);
  if (bytes.starts_with("MTSK")) {
    auto task = jobs::ParseTaskOutputs(bytes);
    if (!task) return 0;
    for (const jobs::DocumentOutputs& outputs : *task) CheckDocument(outputs);
    MINERU_CHECK(jobs::SerializeTaskOutputs(*task) == bytes);
    return 0;
  }
  auto outputs = jobs::ParseDocumentOutputs(bytes);
  if (!outputs) return 0;
  CheckDocument(*outputs);
  MINERU_CHECK(jobs::SerializeDocumentOutputs(*outputs) == bytes);
  return 0;
}
