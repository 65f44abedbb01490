// SPDX-License-Identifier: Apache-2.0
// `mineru-cpp bench-http` end to end: make-model writes a tiny random checkpoint with the Qwen2
// tokenizer (written by the CTest fixture text_qwen_tokenizer), `mineru-cpp serve` serves it on a
// free port, and bench-http runs chat requests from 2 keep-alive clients: the printed table has
// its header and one well-formed row per client count, with every request answered.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cli_test_util.h"

extern char** environ;

namespace mineru::apps {
namespace {

using testing::CliResult;
using testing::Describe;
using testing::RunCli;
using testing::Succeeded;
using testing::UsageError;

const std::string kBinary = std::string(MINERU_BINARY_DIR) + "/src/apps/mineru-cpp";

// `mineru-cpp serve` as a child process: started on port 0, its URL read from the
// "listening on http://HOST:PORT" line of its stderr; SIGTERM and reaped on destruction.
class Server {
 public:
  explicit Server(const std::string& model_dir) {
    int fds[2];
    if (pipe(fds) != 0) return;
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, fds[1], STDERR_FILENO);
    posix_spawn_file_actions_addclose(&actions, fds[0]);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    std::vector<std::string> args = {
        kBinary, "--threads",           "2",          "serve", "--model", model_dir, "--port",
        "0",     "--served-model-name", "tiny-mineru"};
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    const int rc = posix_spawn(&pid_, kBinary.c_str(), &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    close(fds[1]);
    if (rc != 0) {
      pid_ = -1;
      close(fds[0]);
      return;
    }
    fd_ = fds[0];
    // Reads until the line naming the URL (or EOF: the server failed to start).
    std::string line;
    char c;
    while (read(fd_, &c, 1) == 1) {
      log_ += c;
      if (c != '\n') {
        line += c;
        continue;
      }
      constexpr std::string_view kListening = "listening on ";
      if (line.rfind(kListening, 0) == 0) {
        url_ = line.substr(kListening.size());
        break;
      }
      line.clear();
    }
  }
  ~Server() {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      int status = 0;
      waitpid(pid_, &status, 0);
    }
    if (fd_ >= 0) close(fd_);
  }
  const std::string& url() const { return url_; }
  const std::string& log() const { return log_; }

 private:
  pid_t pid_ = -1;
  int fd_ = -1;
  std::string url_;
  std::string log_;
};

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
  Server server(model_dir);
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
