// SPDX-License-Identifier: Apache-2.0
// The OpenAI-compatible API on top of the generation engine: what MinerU's vlm-http-client
// (and other OpenAI/vLLM clients) talk to (mineru-vl-utils vlm_client/http_client.py).
//
//   GET  /v1/models            {"object":"list","data":[{"id": model_id, ...,
//                              "mineru_profile": "2509"|"pro"}]}: exactly one model
//   POST /v1/chat/completions  chat.completion, or chat.completion.chunk events with "stream"
//
//   HttpServer server;
//   AddOpenAiRoutes(server, *engine, {.model_id = "MinerU2.5-2509-1.2B"});
//   MINERU_RETURN_IF_ERROR(server.Start(options));
//
// Rules:
// * The request body must be Content-Type application/json (else 415) holding an object; how it
//   becomes an engine request (content parts in any order, zero or more images, token limits,
//   skip_special_tokens, priority, vllm_xargs) is in service/chat_request.h.
// * "model", when present, must equal model_id (else 404, code "model_not_found").
// * Images travel as data URLs ("data:image/png;base64,..."). http:// and https:// URLs are
//   fetched only when allow_remote_images is set (url_fetch.h: http(s) redirects only, bounded
//   size and time, public addresses only unless allow_private_remote_images), else refused with
//   400 naming the flag that allows them; file:// and every other scheme are always refused
//   (400).
// * Backpressure: a full engine queue (max_waiting) answers 429, a stopping engine 503, both
//   with Retry-After: kRetryAfter (service/api_error.h).
// * request_timeout bounds each chat request from its arrival (queueing, images and
//   generation). A request that reaches it answers 504 (type "timeout_error", code
//   "request_timeout"); a stream that already started gets that error as an event, then
//   [DONE]. Not the partial text with finish_reason "length": MinerU's client accepts "length"
//   with only a warning, so a truncated page would silently enter the document, while an error
//   makes the client retry or report the page.
// * Every error is OpenAI's shape plus vLLM's marker, which MinerU's client checks:
//   {"object":"error","error":{"message","type","param","code"}}.
// * With `cache` set, a deterministic request (greedy, or sampled with a seed) already answered
//   is answered again from it: the same text, finish reason and usage, streamed or not, without
//   the engine (service/chat_cache.h). Only completed answers are kept.
// * A generation holds no thread: the handler submits the request and returns (a later answer,
//   or an event stream), and the engine's token callback drives the rest in short tasks on the
//   server's handler pool (service/chat_generation.h; the formats in service/chat_response.h). Chat
//   requests in flight (from the moment one is read until its answer is complete) are bounded by
//   max_chat_in_flight; one more is answered 429 with Retry-After before its body is parsed. A
//   client that disconnects cancels its engine request at once (queued, in prefill or decoding). A
//   stream that the server ends at its drain deadline gets an error event (type
//   "unavailable_error") and [DONE].
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

#include "engine/engine.h"
#include "image/decode.h"
#include "pipeline/profile.h"
#include "pipeline/request_cache.h"
#include "service/chat_limits.h"
#include "service/http_server.h"
#include "service/url_fetch.h"

namespace mineru::service {

inline constexpr std::chrono::milliseconds kDefaultChatRequestTimeout{600'000};
inline constexpr int64_t kDefaultMaxChatInFlight = 512;

struct OpenAiOptions {
  // The served model name: the one entry of /v1/models and the only accepted "model".
  std::string model_id = "mineru";
  // The served checkpoint's profile, reported as "mineru_profile" on the /v1/models entry so a
  // client can tell MinerU2.5-2509 from MinerU2.5-Pro behind one model id.
  pipeline::Profile profile = pipeline::Profile::k2509;
  // Largest image: bytes of the encoded file inside one data URL, or fetched from a URL.
  uint64_t max_image_bytes = image::kDefaultMaxImageBytes;
  // What one request may ask for: images (their count, decoded bytes and the process-wide
  // budget of images in flight), no-repeat n-gram size, stop strings, logit_bias.
  ChatLimits limits;
  // Fetch http:// and https:// image URLs (--allow-remote-images); off by default because a
  // server that fetches URLs its clients name can be steered at internal addresses.
  bool allow_remote_images = false;
  // Let those fetches reach loopback, private, link-local, ... addresses too
  // (--allow-private-remote-images; service/remote_address.h). Off: public addresses only.
  bool allow_private_remote_images = false;
  // Bounds of one remote image fetch (max_bytes is max_image_bytes).
  std::chrono::milliseconds remote_image_timeout = kDefaultFetchTimeout;
  int remote_image_max_redirects = kDefaultFetchMaxRedirects;
  // One chat request from arrival to its last byte of output; 0 = none. MinerU's client gives
  // up reading after 600 s, so work past that is wasted.
  std::chrono::milliseconds request_timeout = kDefaultChatRequestTimeout;
  // Chat requests being parsed, waiting or generating at once; one more is 429 with
  // Retry-After. What bounds the memory of requests the engine has not admitted yet (their
  // decoded images) now that no handler thread is held per generation.
  int64_t max_chat_in_flight = kDefaultMaxChatInFlight;
  // Answers of deterministic requests (the block cache serve also hands the task manager: in
  // process and, with --cache, Redis); null: none. Must outlive the server.
  pipeline::RequestCache* cache = nullptr;
  // Per lookup in `cache` (metrics).
  std::function<void(bool hit)> on_cache_lookup;
};

// Registers the routes; `engine` must outlive the server (and `server` the routes' use of it:
// generations post their continuations to it).
void AddOpenAiRoutes(HttpServer& server, engine::Engine& engine, const OpenAiOptions& options);

}  // namespace mineru::service
