// SPDX-License-Identifier: Apache-2.0
#include "base/sha256.h"

#include <gtest/gtest.h>

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
