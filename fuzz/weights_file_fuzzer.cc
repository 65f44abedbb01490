// SPDX-License-Identifier: Apache-2.0
// A prepared weights file (model/weights_file.h WeightsFile::Open, then View of every tensor it
// lists), from an in-memory file, read as either kind: the int8 file `quantize` writes and the
// packed panels `pack` writes.
// Invariants: every listed tensor lies inside the file and views exactly its bytes.
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "fuzz/fuzz_util.h"
#include "model/weights_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace mineru;
  const fuzz::MemoryFile file(std::span<const uint8_t>(data, size));
  for (const model::WeightsFileKind kind :
       {model::WeightsFileKind::kInt8, model::WeightsFileKind::kPanels}) {
    auto opened = model::WeightsFile::Open(file.path(), kind, "fp", model::CheckpointLimits{});
    if (!opened) continue;
    for (const auto& [name, entry] : opened->entries()) {
      MINERU_CHECK(
          entry.offset >= 0 && entry.bytes >= 0 && static_cast<uint64_t>(entry.offset) <= size &&
          static_cast<uint64_t>(entry.bytes) <= size - static_cast<uint64_t>(entry.offset));
      auto view = opened->View(name, entry.rows, entry.cols, entry.dtype);
      MINERU_CHECK(view.has_value(), "{}", view ? "" : view.error().ToString());
      MINERU_CHECK(view->bytes() == entry.bytes);
      MINERU_CHECK(
          std::memcmp(view->data(), data + entry.offset, static_cast<size_t>(entry.bytes)) == 0);
    }
  }
  return 0;
}
