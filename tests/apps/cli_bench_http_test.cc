// SPDX-License-Identifier: Apache-2.0
// `mineru-cpp bench-http` end to end: make-model writes a tiny random checkpoint with the Qwen2
// tokenizer (written by the CTest fixture text_qwen_tokenizer), `mineru-cpp serve` serves it on a
// free port, and bench-http runs chat requests from 2 keep-alive clients: the printed table has
// its header and one well-formed row per client count, with every request answered.

#include <chrono>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cli_test_util.h"
#include "serve_process.h"

namespace mineru::apps {
namespace {

using testing::CliResult;
using testing::Describe;
using testing::RunCli;
using testing::Succeeded;
using testing::UsageError;

// The rows of the table under the header line ("clients requests errors ...").
std::vector<std::vector<std::string>> TableRows(const std::string& out) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream lines(out);
  std::string line;
  bool in_table = false;
  while (std::getline(lines, line)) {
    std::istringstream fields(line);
    std::vector<std::string> row;
    for (std::string f; fields >> f;) row.push_back(f);
    if (!in_table) {
      in_table = !row.empty() && row[0] == "clients";
      if (in_table) rows.push_back(row);
      continue;
    }
    if (!row.empty()) rows.push_back(row);
  }
  return rows;
}

TEST(BenchHttpCliTest, ChatAgainstServeOfATinyModel) {
  const std::string model_dir = testing::TestDir() + "/model";
  const CliResult made = RunCli({"make-model", "--config", "tiny", "-o", model_dir,
                                 "--tokenizer-source", MINERU_QWEN_TOKENIZER});
  ASSERT_TRUE(Succeeded(made));
  testing::ServeProcess server({"--model", model_dir, "--served-model-name", "tiny-mineru"});
  ASSERT_EQ(server.url().rfind("http://", 0), 0u) << server.log();

  const CliResult r = RunCli({"bench-http", "--url", server.url(), "--clients", "1,2", "--requests",
                              "3", "--kind", "chat", "--max-tokens", "4"});
  ASSERT_TRUE(Succeeded(r));
  const auto rows = TableRows(r.out);
  ASSERT_EQ(rows.size(), 3u) << Describe(r);
  const std::vector<std::string> header = {"clients", "requests", "errors", "req/s",   "p50_ms",
                                           "p90_ms",  "p99_ms",   "max_ms", "tokens/s"};
  EXPECT_EQ(rows[0], header) << Describe(r);
  for (size_t i = 1; i < rows.size(); ++i) {
    const std::vector<std::string>& row = rows[i];
    ASSERT_EQ(row.size(), header.size()) << Describe(r);
    const int clients = i == 1 ? 1 : 2;
    EXPECT_EQ(row[0], std::to_string(clients)) << Describe(r);
    EXPECT_EQ(row[1], std::to_string(clients * 3)) << Describe(r);
    EXPECT_EQ(row[2], "0") << Describe(r);
    std::vector<double> values;
    for (size_t k = 3; k < row.size(); ++k) {
      size_t used = 0;
      double v = -1;
      try {
        v = std::stod(row[k], &used);
      } catch (...) {
      }
      EXPECT_EQ(used, row[k].size()) << "not a number: " << row[k] << "\n" << Describe(r);
      EXPECT_GT(v, 0) << header[k] << "\n" << Describe(r);
      values.push_back(v);
    }
    // p50 <= p90 <= p99 <= max
    EXPECT_LE(values[1], values[2]) << Describe(r);
    EXPECT_LE(values[2], values[3]) << Describe(r);
    EXPECT_LE(values[3], values[4]) << Describe(r);
  }
}

TEST(BenchHttpCliTest, BadArgumentsAreUsageErrors) {
  EXPECT_TRUE(UsageError(RunCli({"bench-http", "--kind", "video"})));
  EXPECT_TRUE(UsageError(RunCli({"bench-http", "--clients", "0"})));
  EXPECT_TRUE(UsageError(RunCli({"bench-http", "--kind", "parse"})));  // no --file
  EXPECT_TRUE(UsageError(RunCli({"bench-http", "--kind", "get"})));    // no --path
  EXPECT_TRUE(UsageError(RunCli({"bench-http", "--kind", "get", "--path", "v1/tasks"})));
}

TEST(BenchHttpCliTest, UnreachableServerFails) {
  // Port 1 on loopback: nothing listens there, so every request fails and the exit is 1.
  const CliResult r =
      RunCli({"bench-http", "--url", "http://127.0.0.1:1", "--clients", "1", "--requests", "1"});
  EXPECT_TRUE(testing::ExitedWith(r, 1)) << Describe(r);
  EXPECT_NE(r.out.find("clients"), std::string::npos) << Describe(r);
}

}  // namespace
}  // namespace mineru::apps
