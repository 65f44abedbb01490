// SPDX-License-Identifier: Apache-2.0
// What a connection answers after its handler returned: event streams (SseWriter, heartbeats,
// the write queue and its limit), later answers (Responder), and the answers Stop's drain
// deadline forces on requests that did not finish (Session::Abort).
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <utility>

#include "service/api_error.h"
#include "service/http_session.h"

namespace mineru::service {

using internal::HasCrLf;
using internal::LowerAscii;

namespace {

std::string ReasonPhrase(int status) {
  return std::string(http::obsolete_reason(static_cast<http::status>(status)));
}

}  // namespace

void Session::Abort() {
  switch (state_) {
    case State::kIdle:
      return Close();
    case State::kReading: {
      // Cancelling the read lands in RefuseReadError, which answers 503 while aborting.
      ErrorCodeT ignored;
      socket_.cancel(ignored);
      return;
    }
    case State::kHandling: {
      ErrorCodeT ignored;
      socket_.cancel(ignored);  // the disconnect watch
      HttpResponse r = HttpResponse::Json(
          503, ApiErrorBody("the server is shutting down: the request did not finish in time",
                            "unavailable_error", "service_unavailable"));
      r.headers["Retry-After"] = std::to_string(kRetryAfter.count());
      record_.rejected_reason = "shutdown";
      WriteResponse(r, /*close_after=*/true);
      disconnect_->Fire();  // the handler (or its later answer) stops its work
      return;
    }
    case State::kStreaming:
      if (!sse_aborted_) {
        sse_aborted_ = true;
        sse_closed_.store(true);  // the writer's later events are refused
        if (!sse_abort_.empty()) {
          sse_bytes_.fetch_add(sse_abort_.size());
          sse_queue_.push_back(sse_abort_);
        }
        sse_close_requested_ = true;
        SseWriteNext();
        disconnect_->Fire();  // the stream's producer stops its work
      }
      return;
    case State::kWriting:
    case State::kClosed:
      return;  // a response being written ends within write_timeout (or at the final close)
  }
}

void Session::PostAnswer(uint64_t request, HttpResponse response) {
  asio::post(exec_, [self = shared_from_this(), request, response = std::move(response)]() mutable {
    if (self->request_count_ != request) return;
    self->OnHandled(std::move(response));
  });
}

bool Session::SseEnqueue(std::string text) {
  if (sse_closed_.load() || disconnect_->flag->load()) return false;
  size_t before = sse_bytes_.fetch_add(text.size());
  if (before + text.size() > limits().max_sse_queue_bytes) {
    asio::post(exec_, [self = shared_from_this()] { self->Close(); });
    return false;
  }
  asio::post(exec_, [self = shared_from_this(), text = std::move(text)]() mutable {
    if (self->state_ != State::kStreaming || self->sse_aborted_) return;
    self->sse_queue_.push_back(std::move(text));
    self->SseWriteNext();
  });
  return true;
}

void Session::SseCloseRequest() {
  if (sse_closed_.exchange(true)) return;
  asio::post(exec_, [self = shared_from_this()] {
    self->sse_close_requested_ = true;
    if (!self->sse_writing_ && self->sse_queue_.empty()) self->Close();
  });
}

void Session::StartStream(HttpResponse response) {
  state_ = State::kStreaming;
  record_.status = response.status;
  keep_alive_ = false;
  sse_abort_ = std::move(response.sse_abort);
  std::string head =
      "HTTP/1.1 " + std::to_string(response.status) + " " + ReasonPhrase(response.status) + "\r\n";
  head +=
      "Content-Type: text/event-stream\r\nCache-Control: no-cache\r\nConnection: close\r\n"
      "X-Accel-Buffering: no\r\n";
  for (const auto& [name, value] : response.headers) {
    if (name.empty() || HasCrLf(name) || HasCrLf(value)) continue;
    std::string lower;
    for (char c : name) lower += LowerAscii(c);
    if (lower == "content-type" || lower == "cache-control" || lower == "connection" ||
        lower == "content-length" || lower == "transfer-encoding") {  // set by the stream
      continue;
    }
    head += name + ": " + value + "\r\n";
  }
  if (!cors_origin_.empty() && !HasCrLf(cors_origin_)) {
    head += "Access-Control-Allow-Origin: " + cors_origin_ + "\r\nVary: Origin\r\n";
  }
  head += "\r\n";
  // The head is not an event: it does not count against max_sse_queue_bytes, so the first
  // events see the whole limit whether or not the head has been written yet.
  sse_uncounted_ = head.size();
  sse_queue_.push_back(std::move(head));
  SseWriteNext();
  StartDisconnectWatch();
  ArmHeartbeat();
  auto channel = std::make_shared<SseWriter::Channel>();
  channel->session = weak_from_this();
  channel->disconnect = disconnect_;
  channel->request = request_count_;
  server_->pool.Post([start = std::move(response.sse), channel] {
    try {
      start(std::make_shared<SseWriter>(channel));
    } catch (...) {
      // The writer is destroyed with the exception: the stream closes.
    }
  });
}

void Session::ArmHeartbeat() {
  heartbeat_.expires_after(limits().sse_heartbeat);
  heartbeat_.async_wait([self = shared_from_this()](ErrorCodeT ec) {
    if (ec || self->state_ != State::kStreaming) return;
    if (!self->sse_writing_ && self->sse_queue_.empty() && !self->sse_close_requested_) {
      std::string ping = ": ping\n\n";
      self->sse_bytes_.fetch_add(ping.size());
      self->sse_queue_.push_back(std::move(ping));
      self->SseWriteNext();
    }
    self->ArmHeartbeat();
  });
}

// Writes everything queued as one batch; one write at a time.
void Session::SseWriteNext() {
  if (state_ != State::kStreaming || sse_writing_) return;
  if (sse_queue_.empty()) {
    if (sse_close_requested_) Close();
    return;
  }
  sse_writing_ = true;
  sse_batch_.clear();
  for (auto& s : sse_queue_) sse_batch_ += s;
  sse_queue_.clear();
  sse_batch_counted_ = sse_batch_.size() - sse_uncounted_;
  sse_uncounted_ = 0;
  ArmDeadline(limits().write_timeout);
  asio::async_write(socket_, asio::buffer(sse_batch_),
                    [self = shared_from_this()](ErrorCodeT ec, size_t) {
                      self->sse_writing_ = false;
                      self->sse_bytes_.fetch_sub(self->sse_batch_counted_);
                      if (self->state_ != State::kStreaming) return;
                      self->CancelDeadline();
                      if (ec) return self->Close();
                      self->SseWriteNext();
                    });
}

SseWriter::SseWriter(std::shared_ptr<Channel> channel) : channel_(std::move(channel)) {}
SseWriter::~SseWriter() { Close(); }

bool SseWriter::Send(std::string_view event, std::string_view data) {
  auto s = channel_->session.lock();
  return s != nullptr && s->SseEnqueue(internal::FormatSseEvent(event, data));
}

bool SseWriter::SendComment(std::string_view text) {
  auto s = channel_->session.lock();
  if (s == nullptr) return false;
  std::string line = ": ";
  for (char c : text) line += (c == '\r' || c == '\n') ? ' ' : c;
  return s->SseEnqueue(line + "\n\n");
}

void SseWriter::Close() {
  if (auto s = channel_->session.lock()) s->SseCloseRequest();
}

bool SseWriter::disconnected() const { return channel_->disconnect->flag->load(); }

std::shared_ptr<const std::atomic<bool>> SseWriter::disconnected_flag() const {
  return channel_->disconnect->flag;
}

void SseWriter::OnDisconnect(std::function<void()> callback) {
  channel_->disconnect->Add(std::move(callback));
}

Responder::Responder(std::shared_ptr<Channel> channel) : channel_(std::move(channel)) {}

Responder::~Responder() {
  if (!channel_->sent.load()) {
    Send(HttpResponse::Error(500, "the handler gave no answer", "server_error"));
  }
}

bool Responder::Send(HttpResponse response) {
  if (channel_->sent.exchange(true)) return false;
  std::vector<uint64_t> tokens;
  {
    std::lock_guard lock(channel_->mu);
    tokens.swap(channel_->tokens);
  }
  for (uint64_t token : tokens) channel_->disconnect->Remove(token);
  auto s = channel_->session.lock();
  if (s == nullptr) return false;
  // Posted even when the client has gone: the answer is what ends the request on the
  // connection (its write then fails and the connection closes).
  s->PostAnswer(channel_->request, std::move(response));
  return !channel_->disconnect->flag->load();
}

bool Responder::disconnected() const { return channel_->disconnect->flag->load(); }

void Responder::OnDisconnect(std::function<void()> callback) {
  const uint64_t token = channel_->disconnect->Add(std::move(callback));
  if (token == 0) return;  // ran at once
  std::lock_guard lock(channel_->mu);
  if (channel_->sent.load()) {
    channel_->disconnect->Remove(token);  // answered meanwhile: not wanted any more
  } else {
    channel_->tokens.push_back(token);
  }
}

}  // namespace mineru::service
