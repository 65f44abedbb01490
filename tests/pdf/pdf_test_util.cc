// SPDX-License-Identifier: Apache-2.0
// The helpers of pdf_test_util.h, and the environment that removes the scratch folder.
#include "pdf_test_util.h"

#include <dirent.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <thread>

extern char** environ;

namespace mineru::pdf::testing {
namespace {

namespace fs = std::filesystem;

// A hung child is killed after this long; every run here takes a few seconds at most.
constexpr auto kChildTimeout = std::chrono::seconds(120);

const std::string& ScratchRoot() {
  static const std::string root = [] {
    std::string dir = ::testing::TempDir();
    if (!dir.empty() && dir.back() != '/') dir += '/';
    dir += "mineru_pdf_test_" + std::to_string(::getpid());
    fs::create_directories(dir);
    return dir;
  }();
  return root;
}

class ScratchCleanup : public ::testing::Environment {
 public:
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(ScratchRoot(), ec);
  }
};
const auto* const kScratchCleanup = ::testing::AddGlobalTestEnvironment(new ScratchCleanup);

}  // namespace

RenderOptions TestOptions() {
  RenderOptions options;
  options.helper_path = kHelper;
  return options;
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

std::string TestDir() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::string dir = ScratchRoot() + "/" + info->test_suite_name() + "." + info->name();
  std::error_code ec;
  fs::remove_all(dir, ec);
  fs::create_directories(dir);
  return dir;
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

RunResult Run(const std::vector<std::string>& argv_in, const std::vector<std::string>& env) {
  static int counter = 0;
  RunResult result;
  for (const std::string& arg : argv_in) result.command += "'" + arg + "' ";
  const std::string capture = ScratchRoot() + "/run" + std::to_string(counter++);
  const std::string out_path = capture + ".out", err_path = capture + ".err";

  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) env_strings.emplace_back(*e);
  env_strings.insert(env_strings.end(), env.begin(), env.end());
  std::vector<char*> envp;
  for (std::string& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_strings = argv_in;
  std::vector<char*> argv;
  for (std::string& s : argv_strings) argv.push_back(s.data());
  argv.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  posix_spawn_file_actions_addopen(&actions, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  pid_t pid = -1;
  const int spawn_error = posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (spawn_error != 0) {
    result.err = "cannot start " + argv_in[0] + ": " + std::strerror(spawn_error);
    return result;
  }
  // Polls rather than blocks so that a hang is reported as a failure, not a stuck test run.
  const auto deadline = std::chrono::steady_clock::now() + kChildTimeout;
  int status = 0;
  for (;;) {
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (done < 0 && errno != EINTR) break;
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  if (WIFEXITED(status)) {
    result.exited = true;
    result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.signal = WTERMSIG(status);
  }
  result.out = ReadFile(out_path);
  result.err = ReadFile(err_path);
  std::error_code ec;
  fs::remove(out_path, ec);
  fs::remove(err_path, ec);
  return result;
}

std::string Describe(const RunResult& r) {
  std::ostringstream s;
  s << "\ncommand: " << r.command << "\n";
  if (r.exited) {
    s << "exit code " << r.exit_code;
  } else {
    s << "signal " << r.signal;
  }
  s << "\nstdout: " << r.out.substr(0, 2000) << "\nstderr: " << r.err.substr(0, 2000);
  return s.str();
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
