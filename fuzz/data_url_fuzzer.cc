// SPDX-License-Identifier: Apache-2.0
// data: URLs and base64 (image/data_url.h), how images arrive inside chat requests.
// Invariants: a parsed URL's payload is within the byte limit and comes back unchanged through
// MakeDataUrl; Base64Decode undoes Base64Encode for any bytes.
#include <cstddef>
#include <cstdint>

#include "fuzz/fuzz_util.h"
#include "image/data_url.h"

namespace {

// Small, so that the limit is reached by inputs of the fuzzer's usual size.
constexpr uint64_t kMaxBytes = 1024;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace mineru;
  const std::string_view text = fuzz::AsText(data, size);

  if (auto url = image::ParseDataUrl(text, kMaxBytes)) {
    MINERU_CHECK(url->bytes.size() <= kMaxBytes);
    auto again = image::ParseDataUrl(image::MakeDataUrl(url->mime_type, url->bytes), kMaxBytes);
    MINERU_CHECK(again.has_value(), "{}", again.error().message);
    MINERU_CHECK(again->mime_type == url->mime_type && again->bytes == url->bytes);
  }

  if (auto decoded = image::Base64Decode(text)) {
    MINERU_CHECK(decoded->size() == text.size() / 4 * 3 - (text.ends_with("==")  ? 2
                                                           : text.ends_with("=") ? 1
                                                                                 : 0));
  }
  const std::string encoded = image::Base64Encode(fuzz::AsBytes(text));
  MINERU_CHECK(encoded.size() == (size + 2) / 3 * 4);
  auto round = image::Base64Decode(encoded);
  MINERU_CHECK(round.has_value() && fuzz::AsText(round->data(), round->size()) == text);
  return 0;
}
