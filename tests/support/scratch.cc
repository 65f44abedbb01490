// SPDX-License-Identifier: Apache-2.0
#include "scratch.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>

namespace mineru::testing_support {
namespace {

namespace fs = std::filesystem;

class ScratchCleanup : public ::testing::Environment {
 public:
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(ScratchRoot(), ec);
  }
};
const auto* const kScratchCleanup = ::testing::AddGlobalTestEnvironment(new ScratchCleanup);

}  // namespace

const std::string& ScratchRoot() {
  static const std::string root = [] {
    std::string dir = ::testing::TempDir();
    if (!dir.empty() && dir.back() != '/') dir += '/';
    dir += "mineru_test_" + std::to_string(::getpid());
    fs::create_directories(dir);
    return dir;
  }();
  return root;
}

std::string TestDir() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::string dir = ScratchRoot() + "/" + info->test_suite_name() + "." + info->name();
  std::error_code ec;
  fs::remove_all(dir, ec);
  fs::create_directories(dir);
  return dir;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void WriteFile(const std::string& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(out.good()) << path;
}

}  // namespace mineru::testing_support
