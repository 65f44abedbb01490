// SPDX-License-Identifier: Apache-2.0
// A local stand-in for the web servers remote image URLs point at: Python's http.server
// (/usr/bin/python3, standard library only) on 127.0.0.1, on a port it picks itself and
// reports through a file (no race for a "free" port). Paths:
//   /image.png          200, the PNG given to Start, with Content-Length
//   /missing            404
//   /big/N              200, N bytes announced by Content-Length
//   /stream/N           200, N bytes without Content-Length (the end is the connection's close)
//   /to-file            302 to file:///etc/passwd
//   /hops/K             302 to /hops/K-1; /hops/0 answers as /image.png (K redirects in all)
//   /hang               never answers (until the server stops)
//   /redirect?to=URL    302 to URL (any URL: a public server whose redirect points inward)
//   /count              200, the number of other requests received so far, as decimal text
#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>

#include "../support/http_client.h"
#include "../support/python_server.h"
#include "../support/scratch.h"

namespace mineru::testing_support {

inline constexpr char kImageServerScript[] = R"PY(
import http.server, os, sys, threading, time, urllib.parse
root, port_file = sys.argv[1], sys.argv[2]
png = open(os.path.join(root, "image.png"), "rb").read()
received = 0
received_lock = threading.Lock()

class Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def body(self, data, length=True):
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        if length:
            self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def redirect(self, location):
        self.send_response(302)
        self.send_header("Location", location)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_GET(self):
        global received
        p = self.path
        try:
            if p == "/count":
                with received_lock:
                    return self.body(str(received).encode())
            with received_lock:
                received += 1
            if p.startswith("/redirect?"):
                query = urllib.parse.parse_qs(urllib.parse.urlsplit(p).query)
                return self.redirect(query["to"][0])
            if p == "/image.png":
                return self.body(png)
            if p.startswith("/big/"):
                return self.body(b"x" * int(p[5:]))
            if p.startswith("/stream/"):
                return self.body(b"x" * int(p[8:]), length=False)
            if p == "/hang":
                time.sleep(3600)
                return
            if p == "/to-file":
                return self.redirect("file:///etc/passwd")
            if p.startswith("/hops/"):
                k = int(p[6:])
                return self.body(png) if k == 0 else self.redirect("/hops/%d" % (k - 1))
        except (BrokenPipeError, ConnectionResetError):
            return
        self.send_error(404)

http.server.ThreadingHTTPServer.daemon_threads = True
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
with open(port_file + ".tmp", "w") as f:
    f.write(str(server.server_address[1]))
os.rename(port_file + ".tmp", port_file)
server.serve_forever()
)PY";

class ImageServer {
 public:
  ImageServer() = default;
  ~ImageServer() { Stop(); }
  ImageServer(const ImageServer&) = delete;
  ImageServer& operator=(const ImageServer&) = delete;

  // Starts the server over a fresh scratch folder holding `png`; false when it did not come up.
  bool Start(const std::string& png) {
    static int started = 0;  // several servers in one test process get their own folders
    const std::string dir = ScratchRoot() + "/image-server-" + std::to_string(++started);
    std::filesystem::create_directories(dir);
    WriteFile(dir + "/image.png", png);
    if (!server_.Start(dir, kImageServerScript)) return false;
    port_ = server_.port();
    return true;
  }

  void Stop() { server_.Stop(); }

  int port() const { return port_; }
  // Requests received so far, other than those for /count; -1 when it cannot be asked.
  int Received() const {
    auto reply = Exchange(port_, "GET", "/count");
    if (!reply || reply->status != 200) return -1;
    return std::atoi(reply->body.c_str());
  }
  std::string Url(const std::string& path) const {
    return "http://127.0.0.1:" + std::to_string(port_) + path;
  }

 private:
  PythonServer server_;
  int port_ = 0;
};

}  // namespace mineru::testing_support
