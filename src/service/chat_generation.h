// SPDX-License-Identifier: Apache-2.0
// One chat completion while the engine generates it: the engine's token callback queues ids, a
// short task on the server's handler pool turns them into text (text/text_assembler.h: the only
// detokenization of a chat request; the engine is told not to decode, Request::decode_text) and
// sends it as stream events or, at the end, one chat.completion (service/chat_response.h).
//
//   auto generation = std::make_shared<ChatGeneration>(server, std::move(text), spec, slot);
//   request.decode_text = false;
//   request.on_token = [generation](const engine::TokenEvent& e) { generation->OnToken(e); };
//   generation->SetHandle(*engine.Submit(std::move(request)));
//   ... HttpResponse::EventStream(... generation->AttachStream(writer) ...)
//
// Rules:
// * No thread waits while the model works; at most one task runs per generation at a time, so
//   its text assembler needs no lock.
// * A stop string that matched cancels the engine request; the answer is then finish_reason
//   "stop" with completion_tokens the ids the assembler had seen.
// * A client that disconnects cancels the engine request at once; a deadline answers 504 (or an
//   error event), an engine failure 500 (or an error event), each stream ending with [DONE].
// * Only completed answers go into the cache (service/chat_cache.h).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "engine/handle.h"
#include "pipeline/request_cache.h"
#include "service/chat_response.h"
#include "service/http_server.h"
#include "text/text_assembler.h"

namespace mineru::service {

// Chat requests in flight at once (OpenAiOptions::max_chat_in_flight): a slot is taken before
// the request is read, so parsing and image decoding are bounded too.
class ChatSlots {
 public:
  explicit ChatSlots(int64_t capacity) : capacity_(capacity) {}
  // False when all `capacity` slots are taken.
  bool TryTake();
  void Give() { used_.fetch_sub(1); }

 private:
  const int64_t capacity_;
  std::atomic<int64_t> used_{0};
};

// One taken slot, given back when destroyed.
class ChatSlot {
 public:
  explicit ChatSlot(std::shared_ptr<ChatSlots> slots) : slots_(std::move(slots)) {}
  ~ChatSlot() {
    if (slots_) slots_->Give();
  }
  ChatSlot(ChatSlot&& other) noexcept : slots_(std::move(other.slots_)) {}
  ChatSlot(const ChatSlot&) = delete;
  ChatSlot& operator=(const ChatSlot&) = delete;
  ChatSlot& operator=(ChatSlot&&) = delete;

 private:
  std::shared_ptr<ChatSlots> slots_;
};

// What a finished generation answers with.
struct AnswerSpec {
  CompletionIdentity identity;
  bool include_usage = false;            // stream_options.include_usage
  std::chrono::milliseconds timeout{0};  // OpenAiOptions::request_timeout, for the message
  pipeline::RequestCache* cache = nullptr;
  std::optional<std::string> key;  // the answer's key in `cache` (a deterministic request)
};

// Ownership: the engine's copy of the request holds this object through its token callback
// and this object holds the request's handle; the end of the generation drops the handle,
// which ends the cycle.
class ChatGeneration : public std::enable_shared_from_this<ChatGeneration> {
 public:
  ChatGeneration(HttpServer& server, std::unique_ptr<text::TextAssembler> text, AnswerSpec spec,
                 ChatSlot slot);

  // Engine thread: returns at once.
  void OnToken(const engine::TokenEvent& event);
  // The submitted request.
  void SetHandle(engine::RequestHandle handle);
  // The answer goes to a responder (non-streaming) or a stream (after its role chunk).
  void AttachResponder(std::shared_ptr<Responder> responder);
  void AttachStream(std::shared_ptr<SseWriter> writer);

 private:
  struct ScheduledRun;

  void Abandon();
  void Schedule();
  void Drop();
  void Run();
  void Add(const std::vector<int32_t>& ids);
  bool Deliver(const std::string& delta);
  void Finish();
  ChatOutcome OutcomeOf(const engine::GenerationResult& result, bool abandoned) const;
  void Respond(const ChatOutcome& o);
  void EndStream(const ChatOutcome& o);
  void Keep(const ChatOutcome& o) const;

  HttpServer& server_;
  std::unique_ptr<text::TextAssembler> text_;  // Run's thread only
  const AnswerSpec spec_;
  ChatSlot slot_;

  std::mutex mu_;  // guards what follows
  engine::RequestHandle handle_;
  std::vector<int32_t> tokens_;  // delivered, not yet taken
  bool finished_ = false;        // the engine's last event came
  bool abandoned_ = false;
  bool scheduled_ = false;  // a Run is posted or running
  bool done_ = false;       // Finish ran
  std::shared_ptr<Responder> responder_;
  std::shared_ptr<SseWriter> writer_;
};

}  // namespace mineru::service
