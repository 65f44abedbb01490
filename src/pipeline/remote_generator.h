// SPDX-License-Identifier: Apache-2.0
// The pipeline's Generator over an OpenAI-compatible model server (pipeline/model_server.h):
// each request is posted to BASE/v1/chat/completions as MinerU's HTTP client posts it
// (pipeline/chat_request_body.h) and its answer read by the client's rules
// (pipeline/chat_answer.h).
//
//   auto generator = RemoteGenerator::Create(options);   // options.model chosen already
//   ParseDocument(**generator, "in.pdf", "out", document_options);
//
// How:
//   * Submit encodes the request's images and body on the caller's thread (so the work scales
//     with the pages in flight) and queues it; nothing blocks on the network there.
//   * One I/O thread drives every transfer with libcurl's multi interface: at most
//     options.concurrency in flight, over a pool of keep-alive connections (HTTP/1.1, HTTPS
//     where the URL says so), started by priority then arrival.
//   * A failed attempt is retried by options.retry (pipeline/retry_policy.h), each attempt
//     bounded by request_timeout and the whole request by its deadline; the last failure is the
//     request's error (FinishReason::kError; kDeadline when the deadline ended it).
//   * An answer with finish_reason "length" is kept (FinishReason::kLength), as MinerU keeps
//     truncated answers; the pipeline flags the block in the report.
//   * RequestHandle::Cancel aborts the transfer (or the wait) within kCancelPollInterval.
//   * Usage comes from the answer's "usage" when it has one; GenerationResult::retries counts
//     the attempts after the first.
//
// Thread safety: Submit and Stats may be called from any thread. The destructor finishes every
// unfinished request with kError ("model server client stopped") and joins the I/O thread.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

#include "base/status.h"
#include "pipeline/generator.h"
#include "pipeline/model_server.h"

namespace mineru::pipeline {

// How one request to the model server ended, for metrics.
struct RemoteRequestRecord {
  enum class Outcome { kOk, kTruncated, kFailed, kCancelled };
  Outcome outcome = Outcome::kOk;
  int attempts = 1;
  double seconds = 0;  // Submit to finish
};

// Counts since Create.
struct RemoteGeneratorStats {
  int64_t requests = 0;   // submitted
  int64_t attempts = 0;   // HTTP attempts started (retries included)
  int64_t retries = 0;    // attempts after a request's first
  int64_t succeeded = 0;  // answered (stop or length)
  int64_t truncated = 0;  // of succeeded: finish_reason "length"
  int64_t failed = 0;     // ended with an error (after every retry) or past their deadline
  int64_t cancelled = 0;
  int64_t in_flight = 0;  // transfers running now
  int64_t waiting = 0;    // queued or waiting to retry
  // Seconds summed over requests: Submit to finish; of which encoding the body (images to PNG,
  // JSON) on the caller's thread, HTTP attempts (connect to last byte, every attempt), and
  // reading the answers.
  double seconds = 0;
  double encode_seconds = 0;
  double transfer_seconds = 0;
  double decode_seconds = 0;
};

struct RemoteGeneratorOptions {
  ModelServerOptions server;
  // Called on the I/O thread as each request finishes; must return quickly.
  std::function<void(const RemoteRequestRecord&)> on_request_finished;
};

class RemoteGenerator final : public Generator {
 public:
  // Errors: kInvalidArgument for a bad URL or option (concurrency < 1, ...), kInternal when
  // libcurl cannot start.
  static Result<std::unique_ptr<RemoteGenerator>> Create(RemoteGeneratorOptions options);
  ~RemoteGenerator() override;
  RemoteGenerator(const RemoteGenerator&) = delete;
  RemoteGenerator& operator=(const RemoteGenerator&) = delete;

  // Errors: kInvalidArgument (what BuildChatRequestBody refuses), kUnavailable once stopping.
  Result<engine::RequestHandle> Submit(engine::Request request) override;

  RemoteGeneratorStats Stats() const;
  const ModelServerOptions& options() const;

  class Impl;

 private:
  explicit RemoteGenerator(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace mineru::pipeline
