// SPDX-License-Identifier: Apache-2.0
// SHA-256 (OpenSSL's implementation) for content digests and model fingerprints.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

namespace mineru {

using Sha256Digest = std::array<uint8_t, 32>;

class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  void Update(std::span<const uint8_t> bytes);
  void Update(std::string_view text);
  // Returns the digest; the object must not be updated afterwards.
  Sha256Digest Finish();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

Sha256Digest Sha256Of(std::string_view text);
std::string HexString(std::span<const uint8_t> bytes);

}  // namespace mineru
