// SPDX-License-Identifier: Apache-2.0
#include "base/sha256.h"

#include <gtest/gtest.h>

#include "base/md5.h"

namespace mineru {
namespace {

TEST(Sha256Test, KnownVectors) {
  // FIPS 180-2 examples.
  EXPECT_EQ(HexString(Sha256Of("abc")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(HexString(Sha256Of("")),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST(Sha256Test, IncrementalEqualsOneShot) {
  Sha256 hasher;
  hasher.Update("ab");
  hasher.Update("c");
  EXPECT_EQ(hasher.Finish(), Sha256Of("abc"));
}

}  // namespace
}  // namespace mineru

namespace mineru {
namespace {

// RFC 1321's test suite.
TEST(Md5Test, KnownVectors) {
  auto md5 = [](std::string_view s) {
    return Md5Hex(std::span(reinterpret_cast<const uint8_t*>(s.data()), s.size()));
  };
  EXPECT_EQ(md5(""), "d41d8cd98f00b204e9800998ecf8427e");
  EXPECT_EQ(md5("abc"), "900150983cd24fb0d6963f7d28e17f72");
  EXPECT_EQ(md5("message digest"), "f96b697d7cb7938d525a2f31aaf161d0");
}

}  // namespace
}  // namespace mineru
