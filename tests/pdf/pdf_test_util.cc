// SPDX-License-Identifier: Apache-2.0
// The helpers of pdf_test_util.h.
#include "pdf_test_util.h"

#include <dirent.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

namespace mineru::pdf::testing {
namespace {

namespace fs = std::filesystem;

}  // namespace

RenderOptions TestOptions() {
  RenderOptions options;
  options.helper_path = kHelper;
  return options;
}

std::string MakePdf(int pages, double width, double height) {
  // Objects: 1 catalog, 2 page tree, 3 the one content stream all pages share, 4.. the pages.
  std::string out = "%PDF-1.7\n";
  std::vector<size_t> offsets;
  auto add = [&](const std::string& body) {
    offsets.push_back(out.size());
    out += std::to_string(offsets.size()) + " 0 obj\n" + body + "\nendobj\n";
  };
  add("<< /Type /Catalog /Pages 2 0 R >>");
  std::string kids;
  for (int i = 0; i < pages; ++i) kids += std::to_string(4 + i) + " 0 R ";
  add("<< /Type /Pages /Kids [" + kids + "] /Count " + std::to_string(pages) + " >>");
  const std::string content = "0 0 1 rg 10 10 100 100 re f";
  add("<< /Length " + std::to_string(content.size()) + " >>\nstream\n" + content + "\nendstream");
  const std::string box = fmt::format("[0 0 {} {}]", width, height);
  for (int i = 0; i < pages; ++i) {
    add("<< /Type /Page /Parent 2 0 R /MediaBox " + box + " /Contents 3 0 R >>");
  }
  const size_t xref = out.size();
  out += "xref\n0 " + std::to_string(offsets.size() + 1) + "\n0000000000 65535 f \n";
  for (size_t offset : offsets) out += fmt::format("{:010d} 00000 n \n", offset);
  out += "trailer\n<< /Size " + std::to_string(offsets.size() + 1) +
         " /Root 1 0 R >>\nstartxref\n" + std::to_string(xref) + "\n%%EOF\n";
  return out;
}

ScopedEnv::ScopedEnv(const char* name, const std::string& value) : name_(name) {
  ::setenv(name, value.c_str(), 1);
}

ScopedEnv::~ScopedEnv() { ::unsetenv(name_); }

RunResult Run(const std::vector<std::string>& argv, const std::vector<std::string>& env) {
  // Every run here takes a few seconds at most, so the default timeout only catches a hang.
  return ::mineru::testing_support::RunProcess(argv, env);
}

::testing::AssertionResult FailedWith(const RunResult& r, const std::vector<std::string>& needles) {
  if (!r.exited || r.exit_code != 1) {
    return ::testing::AssertionFailure() << "expected exit code 1" << Describe(r);
  }
  if (r.err.rfind("mineru-cpp: error: ", 0) != 0 || r.err.find('\n') != r.err.size() - 1) {
    return ::testing::AssertionFailure() << "expected one error line" << Describe(r);
  }
  for (const std::string& needle : needles) {
    if (r.err.find(needle) == std::string::npos) {
      return ::testing::AssertionFailure() << "stderr lacks '" << needle << "'" << Describe(r);
    }
  }
  return ::testing::AssertionSuccess();
}

Ppm ReadPpm(const std::string& path) {
  Ppm ppm;
  const std::string bytes = ReadFile(path);
  std::istringstream in(bytes);
  std::string magic;
  int max = 0;
  in >> magic >> ppm.width >> ppm.height >> max;
  EXPECT_EQ(magic, "P6") << path;
  EXPECT_EQ(max, 255) << path;
  const size_t start = static_cast<size_t>(in.tellg()) + 1;  // one whitespace byte
  const size_t size = static_cast<size_t>(ppm.width) * ppm.height * 3;
  EXPECT_EQ(bytes.size(), start + size) << path;
  if (bytes.size() == start + size) ppm.rgb.assign(bytes.begin() + start, bytes.end());
  return ppm;
}

int OpenDescriptorCount() {
  int count = 0;
  DIR* dir = ::opendir("/proc/self/fd");
  if (dir == nullptr) return -1;
  while (const dirent* entry = ::readdir(dir)) {
    if (entry->d_name[0] != '.') ++count;
  }
  ::closedir(dir);
  return count - 1;  // the directory stream itself
}

bool NoChildren() {
  int status = 0;
  return ::waitpid(-1, &status, WNOHANG) < 0 && errno == ECHILD;
}

int64_t NonWhiteBytes(const std::vector<uint8_t>& rgb) {
  int64_t n = 0;
  for (uint8_t v : rgb) n += v != 255;
  return n;
}

}  // namespace mineru::pdf::testing
