// SPDX-License-Identifier: Apache-2.0
#include "pipeline/remote_generator.h"

#include <curl/curl.h>
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <random>
#include <thread>
#include <unordered_map>
#include <vector>

#include "engine/handle.h"
#include "pipeline/chat_answer.h"
#include "pipeline/chat_request_body.h"
#include "pipeline/model_server_transfer.h"
#include "pipeline/page_extractor.h"

namespace mineru::pipeline {
namespace {

using engine::Clock;
using std::chrono::milliseconds;

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

milliseconds Ms(Clock::duration d) {
  return std::max(milliseconds(0), std::chrono::duration_cast<milliseconds>(d));
}

// One submitted request, from Submit to its end.
struct Job {
  std::shared_ptr<const std::string> body;
  std::shared_ptr<engine::RequestState> state;
  int32_t priority = 0;
  uint64_t seq = 0;
  Clock::time_point submitted;
  Clock::time_point deadline;
  bool request_deadline = false;  // the deadline is the request's own (engine semantics)
  std::optional<Clock::time_point> first_start;
  Clock::time_point attempt_start;
  int attempts = 0;
  std::string last_error;
  double encode_seconds = 0;
  std::unique_ptr<ModelServerTransfer> transfer;  // while an attempt runs
};

}  // namespace

class RemoteGenerator::Impl {
 public:
  Impl(RemoteGeneratorOptions options, std::string chat_url, CURLM* multi)
      : options_(std::move(options)), chat_url_(std::move(chat_url)), multi_(multi) {
    rng_.seed(std::random_device{}());
    thread_ = std::thread([this] { Loop(); });
  }

  ~Impl() {
    stopping_.store(true);
    curl_multi_wakeup(multi_);
    thread_.join();
    curl_multi_cleanup(multi_);
  }

  Result<engine::RequestHandle> Submit(engine::Request request) {
    if (stopping_.load()) {
      return Fail(ErrorCode::kUnavailable, "model server client stopped");
    }
    const Clock::time_point submitted = Clock::now();
    ChatBodyOptions body_options;
    body_options.png_compression_level = options_.server.png_compression_level;
    MINERU_ASSIGN_OR_RETURN(std::string body,
                            BuildChatRequestBody(request, options_.server.model, body_options));
    auto job = std::make_unique<Job>();
    job->body = std::make_shared<const std::string>(std::move(body));
    job->state = std::make_shared<engine::RequestState>(std::move(request.on_token));
    job->priority = request.priority;
    job->submitted = submitted;
    job->deadline = submitted + options_.server.deadline;
    if (request.deadline && *request.deadline < job->deadline) {
      job->deadline = *request.deadline;
      job->request_deadline = true;
    }
    job->encode_seconds = Seconds(Clock::now() - submitted);
    engine::RequestHandle handle(job->state);
    {
      std::lock_guard lock(mutex_);
      job->seq = next_seq_++;
      ++stats_.requests;
      ++stats_.waiting;
      stats_.encode_seconds += job->encode_seconds;
      incoming_.push_back(std::move(job));
    }
    curl_multi_wakeup(multi_);
    return handle;
  }

  RemoteGeneratorStats Stats() const {
    std::lock_guard lock(mutex_);
    return stats_;
  }

  const ModelServerOptions& options() const { return options_.server; }

 private:
  using Key = std::pair<int32_t, uint64_t>;  // priority, then arrival

  void Loop() {
    while (true) {
      {
        std::lock_guard lock(mutex_);
        for (auto& job : incoming_) {
          const Key key{job->priority, job->seq};
          ready_.emplace(key, std::move(job));
        }
        incoming_.clear();
      }
      if (stopping_.load()) break;
      const Clock::time_point now = Clock::now();
      // Cancellations and deadlines are looked at a few times per poll interval, not on every
      // network event (the sweep visits every request).
      if (now - last_sweep_ >= kCancelPollInterval / 2) {
        Sweep(now);
        last_sweep_ = now;
      }
      while (!delayed_.empty() && delayed_.begin()->first <= now) {
        auto node = delayed_.extract(delayed_.begin());
        const Key key{node.mapped()->priority, node.mapped()->seq};
        ready_.emplace(key, std::move(node.mapped()));
      }
      while (static_cast<int>(running_.size()) < options_.server.concurrency && !ready_.empty()) {
        auto node = ready_.extract(ready_.begin());
        Start(std::move(node.mapped()));
      }
      int still_running = 0;
      curl_multi_perform(multi_, &still_running);
      int queued = 0;
      bool completed = false;
      while (CURLMsg* msg = curl_multi_info_read(multi_, &queued)) {
        if (msg->msg != CURLMSG_DONE) continue;
        auto it = running_.find(msg->easy_handle);
        if (it == running_.end()) continue;
        std::unique_ptr<Job> job = std::move(it->second);
        running_.erase(it);
        curl_multi_remove_handle(multi_, job->transfer->easy());
        Completed(std::move(job), msg->data.result);
        completed = true;
      }
      // A finished transfer freed a slot: start the next request now, not after the poll.
      if (completed && !ready_.empty()) continue;
      // Wake for network activity, Submit (curl_multi_wakeup), the next retry, or the next
      // look at cancellations and deadlines.
      milliseconds wait = kCancelPollInterval;
      if (!delayed_.empty()) wait = std::min(wait, Ms(delayed_.begin()->first - Clock::now()));
      curl_multi_poll(multi_, nullptr, 0, static_cast<int>(wait.count()), nullptr);
    }
    // Stopping: every request still here ends now.
    for (auto& [easy, job] : running_) {
      curl_multi_remove_handle(multi_, easy);
      Stopped(*job);
      End(std::move(job), engine::FinishReason::kError, "model server client stopped");
    }
    running_.clear();
    for (auto& [key, job] : ready_) {
      End(std::move(job), engine::FinishReason::kError, "model server client stopped");
    }
    ready_.clear();
    for (auto& [when, job] : delayed_) {
      End(std::move(job), engine::FinishReason::kError, "model server client stopped");
    }
    delayed_.clear();
    std::lock_guard lock(mutex_);
    for (auto& job : incoming_) {
      End(std::move(job), engine::FinishReason::kError, "model server client stopped", false);
    }
    incoming_.clear();
  }

  // Cancelled requests and those past their deadline end wherever they are.
  void Sweep(Clock::time_point now) {
    auto ended = [&](const Job& job) {
      return job.state->cancel_requested() || now >= job.deadline;
    };
    auto end = [&](std::unique_ptr<Job> job) {
      if (job->state->cancel_requested()) {
        End(std::move(job), engine::FinishReason::kCancelled, "");
      } else {
        EndPastDeadline(std::move(job));
      }
    };
    for (auto it = running_.begin(); it != running_.end();) {
      if (!ended(*it->second)) {
        ++it;
        continue;
      }
      curl_multi_remove_handle(multi_, it->first);
      std::unique_ptr<Job> job = std::move(it->second);
      it = running_.erase(it);
      Stopped(*job);
      end(std::move(job));
    }
    for (auto it = ready_.begin(); it != ready_.end();) {
      if (!ended(*it->second)) {
        ++it;
        continue;
      }
      std::unique_ptr<Job> job = std::move(it->second);
      it = ready_.erase(it);
      end(std::move(job));
    }
    for (auto it = delayed_.begin(); it != delayed_.end();) {
      if (!ended(*it->second)) {
        ++it;
        continue;
      }
      std::unique_ptr<Job> job = std::move(it->second);
      it = delayed_.erase(it);
      end(std::move(job));
    }
  }

  void Start(std::unique_ptr<Job> job) {
    const Clock::time_point now = Clock::now();
    const milliseconds timeout = std::min(options_.server.request_timeout, Ms(job->deadline - now));
    auto transfer = ModelServerTransfer::Make(options_.server, chat_url_, job->body,
                                              std::max(milliseconds(1), timeout));
    if (!transfer) {
      End(std::move(job), engine::FinishReason::kError, transfer.error().message);
      return;
    }
    job->transfer = std::move(*transfer);
    if (curl_multi_add_handle(multi_, job->transfer->easy()) != CURLM_OK) {
      End(std::move(job), engine::FinishReason::kError, "libcurl: cannot start the transfer");
      return;
    }
    if (!job->first_start) job->first_start = now;
    job->attempt_start = now;
    ++job->attempts;
    {
      std::lock_guard lock(mutex_);
      ++stats_.attempts;
      if (job->attempts > 1) ++stats_.retries;
      --stats_.waiting;
      ++stats_.in_flight;
    }
    CURL* easy = job->transfer->easy();
    running_.emplace(easy, std::move(job));
  }

  // An attempt ends before its transfer did (cancelled, past the deadline, stopping).
  void Stopped(Job& job) {
    job.transfer.reset();
    std::lock_guard lock(mutex_);
    --stats_.in_flight;
    ++stats_.waiting;
    stats_.transfer_seconds += Seconds(Clock::now() - job.attempt_start);
  }

  void Completed(std::unique_ptr<Job> job, CURLcode code) {
    const Clock::time_point now = Clock::now();
    AttemptOutcome outcome = job->transfer->Finish(code);
    job->transfer.reset();
    {
      std::lock_guard lock(mutex_);
      --stats_.in_flight;
      ++stats_.waiting;  // until End or the next Start
      stats_.transfer_seconds += Seconds(now - job->attempt_start);
    }
    switch (outcome.kind) {
      case AttemptOutcome::Kind::kAnswer:
        Answered(std::move(job), outcome.body);
        return;
      case AttemptOutcome::Kind::kFatal:
        End(std::move(job), engine::FinishReason::kError, "model server: " + outcome.error);
        return;
      case AttemptOutcome::Kind::kRetryable:
        break;
    }
    job->last_error = outcome.error;
    if (job->attempts > options_.server.retry.max_retries) {
      End(std::move(job), engine::FinishReason::kError,
          fmt::format("model server: {} (after {} attempts)", outcome.error, job->attempts));
      return;
    }
    const milliseconds wait = outcome.retry_after.value_or(
        BackoffDelay(job->attempts, options_.server.retry.backoff_base, rng_));
    if (now + wait >= job->deadline) {
      EndPastDeadline(std::move(job));
      return;
    }
    const Clock::time_point when = now + wait;
    delayed_.emplace(when, std::move(job));
  }

  void Answered(std::unique_ptr<Job> job, const std::string& body) {
    const Clock::time_point start = Clock::now();
    auto answer = ReadChatAnswer(body, options_.server.end_token);
    engine::GenerationResult result;
    if (answer) {
      result.finish_reason =
          answer->truncated ? engine::FinishReason::kLength : engine::FinishReason::kStop;
      result.text = std::move(answer->content);
      result.usage.prompt_tokens = answer->prompt_tokens.value_or(0);
      result.usage.completion_tokens = answer->completion_tokens.value_or(0);
    }
    {
      std::lock_guard lock(mutex_);
      stats_.decode_seconds += Seconds(Clock::now() - start);
    }
    if (!answer) {
      End(std::move(job), engine::FinishReason::kError, "model server: " + answer.error().message);
      return;
    }
    Finish(std::move(job), std::move(result));
  }

  // The deadline passed (or the next retry could not start before it).
  void EndPastDeadline(std::unique_ptr<Job> job) {
    std::string error =
        job->request_deadline
            ? std::string("request timeout")
            : fmt::format("no answer within the deadline of {} s (--model-server-deadline)",
                          options_.server.deadline.count() / 1000.0);
    if (!job->last_error.empty()) error += "; last attempt: " + job->last_error;
    End(std::move(job), engine::FinishReason::kDeadline, "model server: " + error);
  }

  void End(std::unique_ptr<Job> job, engine::FinishReason reason, std::string error,
           bool lock = true) {
    engine::GenerationResult result;
    result.finish_reason = reason;
    result.error = std::move(error);
    Finish(std::move(job), std::move(result), lock);
  }

  void Finish(std::unique_ptr<Job> job, engine::GenerationResult result, bool lock = true) {
    const Clock::time_point now = Clock::now();
    result.retries = std::max(0, job->attempts - 1);
    result.timings.queued = Seconds(job->first_start.value_or(now) - job->submitted);
    result.timings.total = Seconds(now - job->submitted);
    RemoteRequestRecord record;
    record.attempts = job->attempts;
    record.seconds = result.timings.total;
    switch (result.finish_reason) {
      case engine::FinishReason::kStop:
        record.outcome = RemoteRequestRecord::Outcome::kOk;
        break;
      case engine::FinishReason::kLength:
        record.outcome = RemoteRequestRecord::Outcome::kTruncated;
        break;
      case engine::FinishReason::kCancelled:
        record.outcome = RemoteRequestRecord::Outcome::kCancelled;
        break;
      default:
        record.outcome = RemoteRequestRecord::Outcome::kFailed;
    }
    {
      std::unique_lock guard(mutex_, std::defer_lock);
      if (lock) guard.lock();
      --stats_.waiting;
      stats_.seconds += record.seconds;
      switch (record.outcome) {
        case RemoteRequestRecord::Outcome::kOk:
          ++stats_.succeeded;
          break;
        case RemoteRequestRecord::Outcome::kTruncated:
          ++stats_.succeeded;
          ++stats_.truncated;
          break;
        case RemoteRequestRecord::Outcome::kCancelled:
          ++stats_.cancelled;
          break;
        case RemoteRequestRecord::Outcome::kFailed:
          ++stats_.failed;
          break;
      }
    }
    if (options_.on_request_finished) options_.on_request_finished(record);
    job->state->Finish(std::move(result));
  }

  const RemoteGeneratorOptions options_;
  const std::string chat_url_;
  CURLM* const multi_;
  std::atomic<bool> stopping_{false};
  std::mt19937_64 rng_;
  Clock::time_point last_sweep_;

  mutable std::mutex mutex_;  // guards incoming_, next_seq_, stats_
  std::vector<std::unique_ptr<Job>> incoming_;
  uint64_t next_seq_ = 0;
  RemoteGeneratorStats stats_;

  // The I/O thread's own.
  std::map<Key, std::unique_ptr<Job>> ready_;
  std::multimap<Clock::time_point, std::unique_ptr<Job>> delayed_;
  std::unordered_map<CURL*, std::unique_ptr<Job>> running_;
  std::thread thread_;
};

Result<std::unique_ptr<RemoteGenerator>> RemoteGenerator::Create(RemoteGeneratorOptions options) {
  const ModelServerOptions& s = options.server;
  if (s.concurrency < 1) {
    return Fail(ErrorCode::kInvalidArgument, "model server concurrency must be at least 1");
  }
  if (s.model.empty()) return Fail(ErrorCode::kInvalidArgument, "no model server model named");
  if (s.retry.max_retries < 0 || s.request_timeout.count() < 1 || s.deadline.count() < 1 ||
      s.connect_timeout.count() < 1 || s.max_answer_bytes == 0) {
    return Fail(ErrorCode::kInvalidArgument,
                "model server retries, timeouts and answer size must be positive");
  }
  MINERU_ASSIGN_OR_RETURN(const std::string base, NormalizeModelServerUrl(s.url));
  InitCurl();
  CURLM* multi = curl_multi_init();
  if (multi == nullptr) return Fail(ErrorCode::kInternal, "libcurl: cannot start");
  // The keep-alive pool: one connection per request in flight, kept between requests.
  curl_multi_setopt(multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, static_cast<long>(s.concurrency));
  curl_multi_setopt(multi, CURLMOPT_MAXCONNECTS, static_cast<long>(s.concurrency));
  auto impl = std::make_unique<Impl>(std::move(options), base + "/v1/chat/completions", multi);
  return std::unique_ptr<RemoteGenerator>(new RemoteGenerator(std::move(impl)));
}

RemoteGenerator::RemoteGenerator(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
RemoteGenerator::~RemoteGenerator() = default;

Result<engine::RequestHandle> RemoteGenerator::Submit(engine::Request request) {
  return impl_->Submit(std::move(request));
}

RemoteGeneratorStats RemoteGenerator::Stats() const { return impl_->Stats(); }

const ModelServerOptions& RemoteGenerator::options() const { return impl_->options(); }

}  // namespace mineru::pipeline
