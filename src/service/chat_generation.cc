// SPDX-License-Identifier: Apache-2.0
#include "service/chat_generation.h"

#include <utility>

#include "service/api_error.h"
#include "service/chat_cache.h"

namespace mineru::service {

bool ChatSlots::TryTake() {
  int64_t used = used_.load();
  while (used < capacity_) {
    if (used_.compare_exchange_weak(used, used + 1)) return true;
  }
  return false;
}

ChatGeneration::ChatGeneration(HttpServer& server, std::unique_ptr<text::TextAssembler> text,
                               AnswerSpec spec, ChatSlot slot)
    : server_(server), text_(std::move(text)), spec_(std::move(spec)), slot_(std::move(slot)) {}

void ChatGeneration::OnToken(const engine::TokenEvent& event) {
  {
    std::lock_guard lock(mu_);
    if (event.token) tokens_.push_back(*event.token);
    if (event.finished) finished_ = true;
  }
  Schedule();
}

void ChatGeneration::SetHandle(engine::RequestHandle handle) {
  {
    std::lock_guard lock(mu_);
    handle_ = std::move(handle);
  }
  Schedule();
}

void ChatGeneration::AttachResponder(std::shared_ptr<Responder> responder) {
  responder->OnDisconnect([weak = weak_from_this()] {
    if (auto self = weak.lock()) self->Abandon();
  });
  {
    std::lock_guard lock(mu_);
    responder_ = std::move(responder);
  }
  Schedule();
}

void ChatGeneration::AttachStream(std::shared_ptr<SseWriter> writer) {
  // Cancelled the moment the client goes away: no token after it.
  writer->OnDisconnect([weak = weak_from_this()] {
    if (auto self = weak.lock()) self->Abandon();
  });
  writer->Send("", RoleChunk(spec_.identity));
  {
    std::lock_guard lock(mu_);
    writer_ = std::move(writer);
  }
  Schedule();
}

// The client went away (or the server stops): the engine ends the request at its next step.
void ChatGeneration::Abandon() {
  std::lock_guard lock(mu_);
  abandoned_ = true;
  if (handle_.valid()) handle_.Cancel();
}

// A posted Run; one the pool drops unrun (it was stopped) drops the generation instead.
struct ChatGeneration::ScheduledRun {
  explicit ScheduledRun(std::shared_ptr<ChatGeneration> g) : generation(std::move(g)) {}
  ~ScheduledRun() {
    if (!ran) generation->Drop();
  }
  ScheduledRun(const ScheduledRun&) = delete;
  ScheduledRun& operator=(const ScheduledRun&) = delete;
  void Go() {
    ran = true;
    generation->Run();
  }
  std::shared_ptr<ChatGeneration> generation;
  bool ran = false;
};

// Posts a Run when there is something to do and none is posted; never under mu_.
void ChatGeneration::Schedule() {
  {
    std::lock_guard lock(mu_);
    if (scheduled_ || done_ || !handle_.valid() || (!responder_ && !writer_)) return;
    if (tokens_.empty() && !finished_) return;
    scheduled_ = true;
  }
  server_.Post([run = std::make_shared<ScheduledRun>(shared_from_this())] { run->Go(); });
}

// The server stopped: nothing will answer. Ends the ownership cycle with the engine's request
// (the engine still ends the request itself).
void ChatGeneration::Drop() {
  std::shared_ptr<Responder> responder;
  std::shared_ptr<SseWriter> writer;
  engine::RequestHandle handle;
  {
    std::lock_guard lock(mu_);
    done_ = true;
    if (handle_.valid()) handle_.Cancel();
    handle = std::move(handle_);
    handle_ = {};
    responder = std::move(responder_);
    writer = std::move(writer_);
  }
}

// On a handler thread; the only one running for this generation.
void ChatGeneration::Run() {
  while (true) {
    std::vector<int32_t> ids;
    bool finished = false;
    {
      std::lock_guard lock(mu_);
      ids.swap(tokens_);
      finished = finished_;
      if (ids.empty() && !finished) {
        scheduled_ = false;
        return;
      }
    }
    if (!ids.empty() && !text_->stopped()) Add(ids);
    if (finished) return Finish();
  }
}

void ChatGeneration::Add(const std::vector<int32_t>& ids) {
  const bool stopped = text_->Add(ids);
  const std::string delta = text_->TakeDelta();
  if (!delta.empty() && !Deliver(delta)) Abandon();
  if (stopped) {  // a stop string matched: the text is final, the rest is not wanted
    std::lock_guard lock(mu_);
    handle_.Cancel();
  }
}

// A piece of a stream's text; false when the stream is gone (or its client too slow).
bool ChatGeneration::Deliver(const std::string& delta) {
  if (!writer_) return true;
  return writer_->Send("", ContentChunk(spec_.identity, delta));
}

void ChatGeneration::Finish() {
  engine::RequestHandle handle;
  bool abandoned = false;
  {
    std::lock_guard lock(mu_);
    done_ = true;
    handle = std::move(handle_);  // ends the cycle with the engine's request
    handle_ = {};
    abandoned = abandoned_;
  }
  // The result is set right after the last callback returned (engine/handle.h): at once.
  const engine::GenerationResult& result = handle.Wait();
  const ChatOutcome o = OutcomeOf(result, abandoned);
  if (o.error.empty()) {
    text_->Finish();
    const std::string rest = text_->TakeDelta();
    if (!rest.empty()) Deliver(rest);
  }
  if (writer_) {
    EndStream(o);
  } else {
    Respond(o);
  }
}

ChatOutcome ChatGeneration::OutcomeOf(const engine::GenerationResult& result,
                                      bool abandoned) const {
  ChatOutcome o;
  o.prompt_tokens = result.usage.prompt_tokens;
  o.completion_tokens = result.usage.completion_tokens;
  if (abandoned) {
    o.error = "the client went away";
  } else if (text_->stopped()) {
    o.finish_reason = "stop";
    o.completion_tokens = text_->ids_seen();
  } else if (result.finish_reason == engine::FinishReason::kStop) {
    o.finish_reason = "stop";
  } else if (result.finish_reason == engine::FinishReason::kLength) {
    o.finish_reason = "length";
  } else if (result.finish_reason == engine::FinishReason::kDeadline) {
    o.timed_out = true;
    o.error = "deadline";
  } else {
    o.error = result.error.empty()
                  ? "generation ended: " + std::string(FinishReasonName(result.finish_reason))
                  : result.error;
  }
  return o;
}

void ChatGeneration::Respond(const ChatOutcome& o) {
  if (o.timed_out) {
    responder_->Send(TimeoutResponse(spec_.timeout));
    return;
  }
  if (!o.error.empty()) {
    responder_->Send(ApiError(500, o.error, "server_error"));
    return;
  }
  Keep(o);
  responder_->Send(HttpResponse::Json(200, CompletionJson(spec_.identity, text_->text(), o)));
}

// SSE: a finish chunk, a usage chunk when asked, [DONE]. An engine failure mid-stream is an
// error event before [DONE] (vLLM's behaviour).
void ChatGeneration::EndStream(const ChatOutcome& o) {
  if (writer_->disconnected()) return;
  if (o.timed_out) {
    writer_->Send("", TimeoutEvent(spec_.timeout));
  } else if (!o.error.empty()) {
    writer_->Send("", ApiErrorBody(o.error, "server_error", {}));
  } else {
    writer_->Send("", FinishChunk(spec_.identity, o.finish_reason));
    if (spec_.include_usage) writer_->Send("", UsageChunk(spec_.identity, o));
    Keep(o);
  }
  writer_->Send("", "[DONE]");
  writer_->Close();
}

// Stores a completed answer under its key (when it has one).
void ChatGeneration::Keep(const ChatOutcome& o) const {
  if (!spec_.key || !spec_.cache) return;
  spec_.cache->Put(*spec_.key, EncodeCachedChat({text_->text(), o.finish_reason, o.prompt_tokens,
                                                 o.completion_tokens}));
}

}  // namespace mineru::service
