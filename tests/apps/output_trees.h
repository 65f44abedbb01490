// SPDX-License-Identifier: Apache-2.0
// Comparing two parses' output folders file by file, for the tests that prove two ways of
// parsing write the same files (in process and through a model server): the corpus PDFs both
// parse, and the files that differ. The layout PDF's /CreationDate is the time it was written
// and is masked; every other byte counts.
#pragma once

#include <algorithm>
#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include "cli_test_util.h"

namespace mineru::apps::testing {

// The PDFs of tests/data/corpus, sorted.
inline std::vector<std::string> CorpusPdfs() {
  std::vector<std::string> out;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::string(MINERU_TEST_DATA_DIR) + "/corpus")) {
    if (entry.path().extension() == ".pdf") out.push_back(entry.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// A file's bytes as compared.
inline std::string ComparableBytes(const std::filesystem::path& path) {
  std::string bytes = ReadFile(path.string());
  if (path.string().ends_with("_layout.pdf")) {
    static const std::regex kDate(R"(/CreationDate \(D:[0-9Z+'\-]*\))");
    bytes = std::regex_replace(bytes, kDate, "/CreationDate ()");
  }
  return bytes;
}

// The files under `a` and `b` (relative paths) whose bytes differ, and "different file lists"
// when one folder has a file the other has not; empty when the trees are the same.
inline std::vector<std::string> TreeDifferences(const std::filesystem::path& a,
                                                const std::filesystem::path& b) {
  namespace fs = std::filesystem;
  auto files = [](const fs::path& root) {
    std::vector<fs::path> list;
    for (const auto& e : fs::recursive_directory_iterator(root)) {
      if (e.is_regular_file()) list.push_back(fs::relative(e.path(), root));
    }
    std::sort(list.begin(), list.end());
    return list;
  };
  std::vector<std::string> out;
  const std::vector<fs::path> fa = files(a), fb = files(b);
  if (fa != fb) out.push_back("different file lists");
  for (const fs::path& rel : fa) {
    if (fs::exists(b / rel) && ComparableBytes(a / rel) != ComparableBytes(b / rel)) {
      out.push_back(rel.string());
    }
  }
  return out;
}

}  // namespace mineru::apps::testing
