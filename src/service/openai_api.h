// SPDX-License-Identifier: Apache-2.0
// The OpenAI-compatible API on top of the generation engine: what MinerU's vlm-http-client
// (and other OpenAI/vLLM clients) talk to (docs: spec mineru.md 4.3-4.4, ecosystem.md).
//
//   GET  /v1/models            {"object":"list","data":[{"id": model_id, ...}]}
//   POST /v1/chat/completions  chat.completion, or chat.completion.chunk events with "stream"
//
//   HttpServer server;
//   AddOpenAiRoutes(server, *engine, {.model_id = "MinerU2.5-2509-1.2B"});
//   MINERU_RETURN_IF_ERROR(server.Start(options));
//
// Rules:
// * The request body must be Content-Type application/json (else 415) holding an object.
// * "model", when present, must equal model_id (else 404, code "model_not_found").
// * Images travel as data URLs ("data:image/png;base64,..."); remote URLs are refused (400).
// * Every error is OpenAI's shape plus vLLM's marker, which MinerU's client checks:
//   {"object":"error","error":{"message","type","param","code"}}.
// * Handlers block a handler thread for the whole generation (streams too), so the server's
//   handler_threads bounds how many requests generate at once.
#pragma once

#include <cstdint>
#include <string>

#include "engine/engine.h"
#include "image/decode.h"
#include "service/http_server.h"

namespace mineru::service {

struct OpenAiOptions {
  // The served model name: the one entry of /v1/models and the only accepted "model".
  std::string model_id = "mineru";
  // Largest decoded image (bytes of the encoded file inside one data URL).
  uint64_t max_image_bytes = image::kDefaultMaxImageBytes;
  // Fetching http(s) image URLs is not implemented: such URLs are refused either way; the
  // message says whether the server forbids them or cannot fetch them.
  bool allow_remote_images = false;
};

// Registers the routes; `engine` must outlive the server.
void AddOpenAiRoutes(HttpServer& server, engine::Engine& engine, const OpenAiOptions& options);

}  // namespace mineru::service
