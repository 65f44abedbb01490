// SPDX-License-Identifier: Apache-2.0
#include "base/sha256.h"

#include <openssl/evp.h>

#include "base/status.h"

namespace mineru {

struct Sha256::State {
  EVP_MD_CTX* ctx = nullptr;
};

Sha256::Sha256() : state_(std::make_unique<State>()) {
  state_->ctx = EVP_MD_CTX_new();
  MINERU_CHECK(state_->ctx != nullptr && EVP_DigestInit_ex(state_->ctx, EVP_sha256(), nullptr) == 1,
               "OpenSSL SHA-256 unavailable");
}

Sha256::~Sha256() { EVP_MD_CTX_free(state_->ctx); }

void Sha256::Update(std::span<const uint8_t> bytes) {
  if (!bytes.empty()) EVP_DigestUpdate(state_->ctx, bytes.data(), bytes.size());
}

void Sha256::Update(std::string_view text) {
  Update(std::span(reinterpret_cast<const uint8_t*>(text.data()), text.size()));
}

Sha256Digest Sha256::Finish() {
  Sha256Digest digest{};
  unsigned int length = 0;
  EVP_DigestFinal_ex(state_->ctx, digest.data(), &length);
  return digest;
}

Sha256Digest Sha256Of(std::string_view text) {
  Sha256 hasher;
  hasher.Update(text);
  return hasher.Finish();
}

std::string HexString(std::span<const uint8_t> bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (uint8_t b : bytes) {
    out.push_back(kHex[b >> 4]);
    out.push_back(kHex[b & 15]);
  }
  return out;
}

}  // namespace mineru
