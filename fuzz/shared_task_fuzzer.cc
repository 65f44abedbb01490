// SPDX-License-Identifier: Apache-2.0
// A shared task's state as another node wrote it to Redis (tasks/task_store.h DecodeSharedTask).
// Invariants: a decoded task has plain document names, as many as its file names, and what
// EncodeSharedTask writes for it decodes again to the same task.
#include <cstddef>
#include <cstdint>

#include "cache/document_outputs.h"
#include "fuzz/fuzz_util.h"
#include "tasks/task_store.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace mineru;
  auto task = jobs::DecodeSharedTask(fuzz::AsText(data, size));
  if (!task) return 0;
  MINERU_CHECK(task->info.documents.size() == task->info.file_names.size());
  for (const std::string& name : task->info.documents) MINERU_CHECK(jobs::IsPlainFileName(name));
  const std::string encoded = jobs::EncodeSharedTask(*task);
  auto again = jobs::DecodeSharedTask(encoded);
  MINERU_CHECK(again.has_value(), "{} does not decode: {}", encoded, again.error().message);
  MINERU_CHECK(jobs::EncodeSharedTask(*again) == encoded);
  return 0;
}
