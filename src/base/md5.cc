// SPDX-License-Identifier: Apache-2.0
#include "base/md5.h"

#include <openssl/evp.h>

#include "base/sha256.h"
#include "base/status.h"

namespace mineru {

std::string Md5Hex(std::span<const uint8_t> bytes) {
  uint8_t digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  MINERU_CHECK(EVP_Digest(bytes.data(), bytes.size(), digest, &length, EVP_md5(), nullptr) == 1,
               "EVP_Digest(md5) failed");
  return HexString(std::span<const uint8_t>(digest, length));
}

}  // namespace mineru
