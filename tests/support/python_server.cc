// SPDX-License-Identifier: Apache-2.0
#include "python_server.h"

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>

extern char** environ;

namespace mineru::testing_support {

bool PythonServer::Start(const std::string& dir, std::string_view script,
                         const std::vector<std::string>& args) {
  namespace fs = std::filesystem;
  Stop();
  port_ = 0;
  std::error_code ec;
  fs::create_directories(dir, ec);
  {
    std::ofstream out(dir + "/server.py", std::ios::binary | std::ios::trunc);
    out.write(script.data(), static_cast<std::streamsize>(script.size()));
    if (!out) return false;
  }
  const std::string port_file = dir + "/port";
  fs::remove(port_file, ec);
  std::vector<std::string> argv_strings = {"/usr/bin/python3", dir + "/server.py", dir, port_file};
  argv_strings.insert(argv_strings.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : argv_strings) argv.push_back(a.data());
  argv.push_back(nullptr);
  if (posix_spawn(&pid_, argv[0], nullptr, nullptr, argv.data(), environ) != 0) {
    pid_ = 0;
    return false;
  }
  for (int i = 0; i < 3000 && !fs::exists(port_file, ec); ++i) {
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {  // it died (its port taken, a bad script)
      pid_ = 0;
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (!fs::exists(port_file, ec)) {
    Stop();
    return false;
  }
  std::ifstream in(port_file);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  port_ = std::atoi(text.c_str());
  return port_ > 0;
}

void PythonServer::Stop() {
  if (pid_ <= 0) return;
  kill(pid_, SIGTERM);
  waitpid(pid_, nullptr, 0);
  pid_ = 0;
}

}  // namespace mineru::testing_support
