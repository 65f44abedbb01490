// SPDX-License-Identifier: Apache-2.0
// A scripted stand-in for an OpenAI-compatible model server (vLLM, llama-server, `mineru-cpp
// serve`), for the tests of the remote generator: Python's http.server (/usr/bin/python3,
// standard library only, ThreadingHTTPServer, HTTP/1.1 keep-alive) on 127.0.0.1, on a port it
// picks itself and reports through a file, or on the port of an earlier run (Restart: the
// listening socket sets SO_REUSEADDR, so the port is free again at once); HTTPS when started
// with a certificate.
//
// POST /v1/chat/completions answers by a script: a JSON list of actions, taken one per request
// in order of arrival, the last one repeating (an empty list: answer "{prompt}"). An action is
// an object; "do" says what it does, every other key is optional:
//
//   {"do": "answer", "content": "{prompt}", "finish_reason": "stop", "usage": {...}}
//       200 with a chat completion: choices[0].message.content is `content` (a string, where
//       "{prompt}" stands for the text of the request's last text part and "{index}" for the
//       request's 1-based number, or null), choices[0].finish_reason is `finish_reason` (any
//       JSON value: "length", null, "tool_calls"), `usage` copied when given (no "usage" key
//       otherwise). Defaults: content "{prompt}", finish_reason "stop".
//   {"do": "status", "status": 503, "retry_after": "1", "body": "..."}
//       that status, with a Retry-After header when `retry_after` is given, and `body` (default:
//       an OpenAI error object naming the status) sent whole with its Content-Length. With
//       status 200 and a body of one's own: any answer at all.
//   {"do": "malformed"}   200 with a complete body (Content-Length right) that is not JSON.
//   {"do": "truncated"}   the answer "answer" would send (same keys), its Content-Length
//                         announcing twice the bytes sent, then a clean close (FIN): a body
//                         cut short.
//   {"do": "reset"}       the connection reset (RST, SO_LINGER 0) without a byte of answer.
//   {"do": "reset_partial"}  the status line, the headers and half of that answer's body,
//                         then a reset.
// For example, one 503 asking for a second's wait, then every request answered with its own
// prompt after half a second:
//   [{"do": "status", "status": 503, "retry_after": "1"}, {"do": "answer", "sleep": 0.5}]
//
// Keys every action may carry, applied in this order before it acts:
//   "gate": "NAME"        wait until the test opens the gate NAME (POST /_open/NAME; a gate
//                         stays open), at most "max_wait" seconds (default 60);
//   "until_in_flight": N  wait until N chat requests are in the server at once (this one
//                         included), at most "max_wait" seconds;
//   "sleep": S            sleep S seconds (a float);
//   "headers": {...}      extra response headers (name: value).
//
// GET /v1/models answers {"object": "list", "data": MODELS} when the models value given to
// Start is a list (entries as given: {"id": "...", "mineru_profile": "pro"}), or the value
// itself when it is anything else (a wrong shape, for the tests of the reader).
//
// What the test reads back (control paths, neither recorded nor counted):
//   GET  /_received   every other request received, in order of arrival: a JSON list of
//                     {"index", "method", "path", "headers" (lower-case names), "body" (text),
//                     "prompt" (the last text part of a chat body, else ""), "peer_port" (the
//                     client's port: one connection, one port)}
//   GET  /_stats      {"chat_requests", "models_requests", "in_flight", "max_in_flight"}
//                     (in flight: a chat request received and not yet answered, from its
//                     body read to the first byte of its answer or its reset;
//                     max_in_flight: the most at once)
//   POST /_script     a new script (body: the JSON list), taken from its first action
//   POST /_open/NAME  opens gate NAME
// A chat request is recorded (and counted in flight) as soon as its body was read, before its
// action waits or acts. Everything recorded is lost when the process stops; a restarted stub
// starts its script and its counts afresh.
#pragma once

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "../support/http_client.h"
#include "../support/python_server.h"
#include "../support/scratch.h"
#include "../support/wait.h"
#include "base/json.h"

namespace mineru::testing_support {

inline constexpr char kModelServerStubScript[] = R"PY(
import http.server, json, os, socket, ssl, struct, sys, threading, time

state_dir, port_file, wanted_port = sys.argv[1], sys.argv[2], int(sys.argv[3])
tls_pem = sys.argv[4] if len(sys.argv) > 4 else ""  # certificate and key: serve https
with open(os.path.join(state_dir, "script.json")) as f:
    script = json.load(f)
with open(os.path.join(state_dir, "models.json")) as f:
    models = json.load(f)

lock = threading.Lock()
changed = threading.Condition(lock)  # in_flight and gates
position = 0
received = []
chat_requests = 0
models_requests = 0
in_flight = 0
max_in_flight = 0
gates = set()


def take_action():
    global position
    with lock:
        if not script:
            return {"do": "answer"}
        action = script[min(position, len(script) - 1)]
        position += 1
        return action


def last_text_part(request):
    try:
        content = request["messages"][-1]["content"]
        if isinstance(content, str):
            return content
        texts = [p.get("text", "") for p in content if p.get("type") == "text"]
        return texts[-1] if texts else ""
    except (KeyError, IndexError, TypeError, AttributeError):
        return ""


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def read_body(self):
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            data = b""
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return data
                data += self.rfile.read(size)
                self.rfile.readline()
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length > 0 else b""

    def answered(self):
        # A request counts in flight until its answer starts: a client that waits for the
        # answer before sending the next one is never seen with two.
        global in_flight
        if getattr(self, "unanswered", False):
            self.unanswered = False
            with changed:
                in_flight -= 1
                changed.notify_all()

    def head(self, status, length, headers=None):
        self.answered()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(length))
        for name, value in (headers or {}).items():
            self.send_header(name, str(value))
        self.end_headers()

    def send(self, status, body, headers=None):
        if isinstance(body, str):
            body = body.encode()
        self.head(status, len(body), headers)
        self.wfile.write(body)

    def reset(self):
        self.answered()
        self.wfile.flush()
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        os.close(self.connection.detach())
        self.close_connection = True

    def record(self, body, prompt):
        entry = {"method": self.command, "path": self.path,
                 "headers": {k.lower(): v for k, v in self.headers.items()},
                 "body": body.decode("utf-8", "replace"), "prompt": prompt,
                 "peer_port": self.client_address[1]}
        with lock:
            entry["index"] = len(received) + 1
            received.append(entry)
        return entry["index"]

    def do_GET(self):
        global models_requests
        try:
            if self.path == "/_received":
                with lock:
                    return self.send(200, json.dumps(received))
            if self.path == "/_stats":
                with lock:
                    return self.send(200, json.dumps({
                        "chat_requests": chat_requests, "models_requests": models_requests,
                        "in_flight": in_flight, "max_in_flight": max_in_flight}))
            if self.path == "/v1/models":
                self.record(b"", "")
                with lock:
                    models_requests += 1
                shaped = {"object": "list", "data": models} if isinstance(models, list) else models
                return self.send(200, json.dumps(shaped))
            self.send(404, json.dumps({"object": "error", "message": "no " + self.path}))
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def do_POST(self):
        global script, position
        try:
            body = self.read_body()
            if self.path == "/_script":
                with lock:
                    script = json.loads(body)
                    position = 0
                return self.send(200, "{}")
            if self.path.startswith("/_open/"):
                with changed:
                    gates.add(self.path[len("/_open/"):])
                    changed.notify_all()
                return self.send(200, "{}")
            if self.path != "/v1/chat/completions":
                self.record(body, "")
                return self.send(404, json.dumps({"object": "error", "message": "no " + self.path}))
            self.chat(body)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def chat(self, body):
        global chat_requests, in_flight, max_in_flight
        try:
            request = json.loads(body)
        except ValueError:
            request = None
        prompt = last_text_part(request) if isinstance(request, dict) else ""
        index = self.record(body, prompt)
        with changed:
            chat_requests += 1
            in_flight += 1
            max_in_flight = max(max_in_flight, in_flight)
            changed.notify_all()
        self.unanswered = True
        try:
            self.act(take_action(), request, prompt, index)
        finally:
            self.answered()

    def act(self, action, request, prompt, index):
        max_wait = float(action.get("max_wait", 60))
        if "gate" in action:
            with changed:
                changed.wait_for(lambda: action["gate"] in gates, timeout=max_wait)
        if "until_in_flight" in action:
            with changed:
                changed.wait_for(lambda: in_flight >= int(action["until_in_flight"]),
                                 timeout=max_wait)
        if "sleep" in action:
            time.sleep(float(action["sleep"]))
        headers = dict(action.get("headers", {}))
        do = action.get("do", "answer")
        if do == "status":
            status = int(action.get("status", 500))
            if "retry_after" in action:
                headers["Retry-After"] = action["retry_after"]
            body = action.get("body", json.dumps(
                {"object": "error", "message": "stub status %d" % status, "code": status}))
            return self.send(status, body, headers)
        if do == "malformed":
            return self.send(200, '{"choices": [{"finish_reason": "stop", "message": {"con',
                             headers)
        if do == "reset":
            return self.reset()
        content = action.get("content", "{prompt}")
        if isinstance(content, str):
            content = content.replace("{prompt}", prompt).replace("{index}", str(index))
        model = request.get("model", "") if isinstance(request, dict) else ""
        answer = {"id": "chatcmpl-stub-%d" % index, "object": "chat.completion",
                  "created": int(time.time()), "model": model,
                  "choices": [{"index": 0,
                               "message": {"role": "assistant", "content": content},
                               "finish_reason": action.get("finish_reason", "stop")}]}
        if "usage" in action:
            answer["usage"] = action["usage"]
        data = json.dumps(answer).encode()
        if do == "truncated":
            self.head(200, 2 * len(data), headers)
            self.wfile.write(data)
            self.close_connection = True
            return
        if do == "reset_partial":
            self.head(200, len(data), headers)
            self.wfile.write(data[:len(data) // 2])
            return self.reset()
        self.send(200, data, headers)


class Server(http.server.ThreadingHTTPServer):
    allow_reuse_address = True
    daemon_threads = True


for attempt in range(200):
    try:
        server = Server(("127.0.0.1", wanted_port), Handler)
        break
    except OSError:
        if wanted_port == 0 or attempt == 199:
            raise
        time.sleep(0.05)
if tls_pem:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(tls_pem)
    server.socket = context.wrap_socket(server.socket, server_side=True)
with open(port_file + ".tmp", "w") as f:
    f.write(str(server.server_address[1]))
os.rename(port_file + ".tmp", port_file)
server.serve_forever()
)PY";

// What the stub recorded of one request (GET /_received).
struct StubRequest {
  std::string method;
  std::string path;
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;
  Json json;           // the body parsed; null when it is not JSON
  std::string prompt;  // the last text part of a chat body
  int peer_port = 0;
};

// GET /_stats.
struct StubStats {
  int chat_requests = 0;
  int models_requests = 0;
  int in_flight = 0;
  int max_in_flight = 0;
};

class ModelServerStub {
 public:
  // One model, as `mineru-cpp serve` lists it.
  static constexpr std::string_view kDefaultModels = R"([{"id": "stub-model"}])";
  // How long the Wait helpers poll: only turns a broken stub or client into a failure instead
  // of a hang.
  static constexpr std::chrono::seconds kWaitLimit{30};

  ModelServerStub() = default;
  ~ModelServerStub() { Stop(); }
  ModelServerStub(const ModelServerStub&) = delete;
  ModelServerStub& operator=(const ModelServerStub&) = delete;

  // Starts the stub on a fresh port with `script` (a JSON list of actions) and `models` (the
  // /v1/models value); false when it did not come up. With `tls_pem` (a PEM file holding a
  // certificate and its key) it speaks HTTPS, and the control paths below do not answer.
  bool Start(std::string_view script, std::string_view models = kDefaultModels,
             std::string tls_pem = "") {
    Stop();
    tls_pem_ = std::move(tls_pem);
    static int started = 0;  // several stubs in one test process get their own folders
    dir_ = ScratchRoot() + "/model-server-stub-" + std::to_string(++started);
    std::filesystem::create_directories(dir_);
    WriteFile(dir_ + "/script.json", script);
    WriteFile(dir_ + "/models.json", models);
    port_ = 0;
    return Launch();
  }

  // Starts the stopped stub again on the same port, with the script and models it last had
  // (SetScript included), its records and counts empty; false when it did not come up.
  bool Restart() {
    if (dir_.empty() || port_ <= 0) return false;
    Stop();
    return Launch();
  }

  // Ends the process (SIGTERM): the port stops accepting and open connections close.
  void Stop() { server_.Stop(); }

  bool running() const { return server_.running(); }
  int port() const { return port_; }
  std::string Url() const { return "http://127.0.0.1:" + std::to_string(port_); }

  // Replaces the script (kept for a Restart too); false when the stub did not take it.
  bool SetScript(std::string_view script) {
    WriteFile(dir_ + "/script.json", script);
    auto reply = Exchange(port_, "POST", "/_script", std::string(script));
    return reply && reply->status == 200;
  }

  bool OpenGate(std::string_view name) {
    auto reply = Exchange(port_, "POST", "/_open/" + std::string(name), "{}");
    return reply && reply->status == 200;
  }

  // nullopt when the stub cannot be asked.
  std::optional<StubStats> Stats() const {
    auto reply = Exchange(port_, "GET", "/_stats");
    if (!reply || reply->status != 200) return std::nullopt;
    auto json = ParseJson(reply->body, "/_stats");
    if (!json || !json->is_object()) return std::nullopt;
    StubStats stats;
    stats.chat_requests = IntField(*json, "chat_requests");
    stats.models_requests = IntField(*json, "models_requests");
    stats.in_flight = IntField(*json, "in_flight");
    stats.max_in_flight = IntField(*json, "max_in_flight");
    return stats;
  }

  // Chat requests received so far; -1 when the stub cannot be asked.
  int ChatRequests() const {
    auto stats = Stats();
    return stats ? stats->chat_requests : -1;
  }

  // Every recorded request, in order of arrival (empty when the stub cannot be asked).
  std::vector<StubRequest> Received() const {
    std::vector<StubRequest> out;
    auto reply = Exchange(port_, "GET", "/_received");
    if (!reply || reply->status != 200) return out;
    auto json = ParseJson(reply->body, "/_received");
    if (!json || !json->is_array()) return out;
    for (const Json& entry : *json) {
      if (!entry.is_object()) continue;
      StubRequest request;
      request.method = StringField(entry, "method");
      request.path = StringField(entry, "path");
      request.body = StringField(entry, "body");
      request.prompt = StringField(entry, "prompt");
      request.peer_port = IntField(entry, "peer_port");
      if (auto headers = entry.find("headers"); headers != entry.end() && headers->is_object()) {
        for (const auto& [name, value] : headers->items()) {
          if (value.is_string()) request.headers[name] = value.get<std::string>();
        }
      }
      if (auto body = ParseJson(request.body, "request body")) request.json = std::move(*body);
      out.push_back(std::move(request));
    }
    return out;
  }

  // The recorded chat requests alone.
  std::vector<StubRequest> ChatReceived() const {
    std::vector<StubRequest> out;
    for (StubRequest& request : Received()) {
      if (request.path == "/v1/chat/completions") out.push_back(std::move(request));
    }
    return out;
  }

  // Polls until the stub has received at least `count` chat requests; false past kWaitLimit.
  bool WaitForChatRequests(int count) const {
    return WaitUntil([&] { return ChatRequests() >= count; }, kWaitLimit);
  }

 private:
  // The stub's own answers, read without nlohmann's throwing accessors all the same.
  static std::string StringField(const Json& object, const char* key) {
    auto it = object.find(key);
    return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
  }
  static int IntField(const Json& object, const char* key) {
    auto it = object.find(key);
    return it != object.end() && it->is_number_integer() ? it->get<int>() : -1;
  }

  // On port_ (0: any), the stub's own state files in dir_.
  bool Launch() {
    std::vector<std::string> args = {std::to_string(port_)};
    if (!tls_pem_.empty()) args.push_back(tls_pem_);
    if (!server_.Start(dir_, kModelServerStubScript, args)) return false;
    port_ = server_.port();
    return true;
  }

  std::string dir_;
  std::string tls_pem_;  // serving https with this certificate and key (control paths: none)
  PythonServer server_;
  int port_ = 0;
};

}  // namespace mineru::testing_support
