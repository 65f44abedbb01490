// SPDX-License-Identifier: Apache-2.0
// Shared helpers of the PDF tests: fixture paths, scratch folders, a PDF writer for documents
// too large or too odd to commit, a runner for mineru-cpp and pdftoppm (RunProcess of
// tests/support/subprocess.h: posix_spawn, never a shell), and checks that a test left no child
// process and no descriptor behind.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../support/scratch.h"
#include "../support/subprocess.h"
#include "image/pdf/page_image.h"
#include "image/pdf/render_options.h"

namespace mineru::pdf::testing {

inline const std::string kPdfData = std::string(MINERU_TEST_DATA_DIR) + "/pdf";
inline const std::string kShapes = kPdfData + "/shapes.pdf";  // 3 pages, see make_fixtures.py
inline const std::string kRealPage = kPdfData + "/mineru_unittest_test.pdf";
inline const std::string kMineruCpp = std::string(MINERU_BINARY_DIR) + "/src/apps/mineru-cpp";
inline const std::string kHelper = MINERU_PDF_RENDER_BUILD_PATH;
inline constexpr char kFaultVar[] = "MINERU_PDF_RENDER_TEST_FAULT";

// Options that use the helper of this build.
RenderOptions TestOptions();

// Scratch folders and whole-file I/O (tests/support/scratch.h).
using ::mineru::testing_support::ReadFile;
using ::mineru::testing_support::ScratchRoot;
using ::mineru::testing_support::TestDir;
using ::mineru::testing_support::WriteFile;

// A PDF of `pages` pages of `width` x `height` points, each with a filled square, written with
// a correct cross-reference table.
std::string MakePdf(int pages, double width = 612, double height = 792);

// Sets an environment variable for the scope (the helper inherits the caller's environment).
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value);
  ~ScopedEnv();

 private:
  const char* name_;
};

// How a run ended and what it wrote; the fields are documented in tests/support/subprocess.h.
using RunResult = ::mineru::testing_support::ProcessResult;

// Runs `argv` (argv[0] is the program: a path, or a name looked up in PATH) with extra
// environment entries ("NAME=value", replacing any inherited NAME), such as kFaultVar for the
// helper that mineru-cpp starts.
RunResult Run(const std::vector<std::string>& argv, const std::vector<std::string>& env = {});

// A using-declaration rather than an overload of its own: argument-dependent lookup finds the
// support library's Describe for a RunResult anyway, and two would make every call ambiguous.
using ::mineru::testing_support::Describe;

// Exit 1 with one "mineru-cpp: error: ..." line holding every needle.
::testing::AssertionResult FailedWith(const RunResult& r, const std::vector<std::string>& needles);

// A binary PPM (P6) file: width, height and RGB bytes.
struct Ppm {
  int width = 0;
  int height = 0;
  std::vector<uint8_t> rgb;
};
Ppm ReadPpm(const std::string& path);

// Number of descriptors this process has open.
int OpenDescriptorCount();
// True when this process has no child processes, running or zombie.
bool NoChildren();

// Bytes of an image that differ from white.
int64_t NonWhiteBytes(const std::vector<uint8_t>& rgb);

}  // namespace mineru::pdf::testing
