// SPDX-License-Identifier: Apache-2.0
// Files and folders a test binary writes: one scratch root per process under
// ::testing::TempDir(), a fresh folder per test, removed when the binary's tests end (the
// environment that does it is registered once, by scratch.cc), and whole-file reads and writes.
#pragma once

#include <string>
#include <string_view>

namespace mineru::testing_support {

// Root of everything this binary writes; removed when the run ends.
const std::string& ScratchRoot();

// A fresh (emptied) directory for the current test.
std::string TestDir();

// The whole file; empty when it cannot be read.
std::string ReadFile(const std::string& path);

// Replaces the file with `bytes`; a failed write fails the current test.
void WriteFile(const std::string& path, std::string_view bytes);

}  // namespace mineru::testing_support
