// SPDX-License-Identifier: Apache-2.0
// A stand-in server written in Python's standard library, as a child process of the test:
// /usr/bin/python3 runs `script` (saved as DIR/server.py) with the arguments DIR, PORT_FILE and
// the caller's own, and the script writes the port it listens on to PORT_FILE once its socket
// listens (write a temporary file and rename it, so that a half-written number is never read).
// No race for a "free" port: the server picks one itself, or takes the one it is told.
//
//   PythonServer server;
//   if (!server.Start(dir, kScript, {"0"})) FAIL();
//   ... http://127.0.0.1:server.port() ...
//   server.Stop();  // SIGTERM, then waits (also on destruction)
#pragma once

#include <sys/types.h>

#include <string>
#include <string_view>
#include <vector>

namespace mineru::testing_support {

class PythonServer {
 public:
  PythonServer() = default;
  ~PythonServer() { Stop(); }
  PythonServer(const PythonServer&) = delete;
  PythonServer& operator=(const PythonServer&) = delete;

  // Writes the script into `dir` (created) and starts it; true once it reported a port. False
  // when Python could not start, died before listening, or did not listen within 30 s (then it
  // is stopped): only turns a broken script into a failure instead of a hang.
  bool Start(const std::string& dir, std::string_view script,
             const std::vector<std::string>& args = {});
  // SIGTERM, then waits: the port stops accepting, open connections close. Idempotent.
  void Stop();

  bool running() const { return pid_ > 0; }
  int port() const { return port_; }

 private:
  pid_t pid_ = 0;
  int port_ = 0;
};

}  // namespace mineru::testing_support
