// SPDX-License-Identifier: Apache-2.0
// A .safetensors file (model/safetensors.h SafetensorsFile::Open): the header length, the JSON
// header and its validation against the file, from an in-memory file.
// Invariants: every tensor's bytes match its dtype and shape and lie inside the file.
#include <cstddef>
#include <cstdint>

#include "fuzz/fuzz_util.h"
#include "model/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace mineru;
  const fuzz::MemoryFile file(std::span<const uint8_t>(data, size));
  auto opened = model::SafetensorsFile::Open(file.path());
  if (!opened) return 0;
  for (const model::TensorInfo& tensor : opened->tensors()) {
    MINERU_CHECK(tensor.offset <= size && tensor.bytes <= size - tensor.offset);
    MINERU_CHECK(tensor.bytes ==
                 static_cast<uint64_t>(tensor.NumElements()) * DTypeSize(tensor.dtype));
    MINERU_CHECK(opened->Data(tensor).size() == tensor.bytes);
  }
  return 0;
}
