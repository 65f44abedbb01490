// SPDX-License-Identifier: Apache-2.0
// Celery task messages (celery/celery_protocol.h) as the worker decodes them, and the Python-
// compatible JSON it writes back (celery/celery_pyjson.h). Input: the AMQP headers as JSON (what
// CeleryFromAmqp makes of the header table), a NUL byte, then the message body; content type
// application/json, encoding utf-8.
// Invariants: a decoded message has an id and a task name within the field limit; its eta and
// expires survive FormatCeleryTime; args and kwargs written by PyJsonDumps (the result meta
// included) parse back to the same values.
#include <cstddef>
#include <cstdint>

#include "base/json.h"
#include "celery/celery_protocol.h"
#include "celery/celery_pyjson.h"
#include "fuzz/fuzz_util.h"

namespace {

using namespace mineru;

void CheckTime(const std::optional<std::string>& text,
               const std::optional<jobs::CeleryTime>& time) {
  MINERU_CHECK(text.has_value() == time.has_value());
  if (!time) return;
  auto again = jobs::ParseCeleryTime(jobs::FormatCeleryTime(*time));
  MINERU_CHECK(again.has_value(), "{} -> {}: {}", *text, jobs::FormatCeleryTime(*time),
               again.error().message);
  // Precision beyond microseconds is dropped on parsing; the formatted text has microseconds.
  MINERU_CHECK(*again == *time, "{} -> {}", *text, jobs::FormatCeleryTime(*time));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto [headers, body] = fuzz::SplitOnce(fuzz::AsText(data, size), '\0');
  auto header_json = ParseJson(headers, "headers", jobs::kCeleryMaxJsonDepth);
  if (!header_json) return 0;
  jobs::CeleryEnvelope envelope;
  envelope.content_type = "application/json";
  envelope.content_encoding = "utf-8";
  envelope.headers = std::move(*header_json);
  envelope.body = std::string(body);
  auto message = jobs::DecodeCeleryMessage(envelope);
  if (!message) return 0;
  MINERU_CHECK(!message->id.empty() && message->id.size() <= jobs::kCeleryMaxFieldBytes);
  MINERU_CHECK(!message->task.empty() && message->task.size() <= jobs::kCeleryMaxFieldBytes);
  MINERU_CHECK(message->args.is_array() && message->kwargs.is_object());
  CheckTime(message->eta, message->eta_time);
  CheckTime(message->expires, message->expires_time);

  for (const Json* value : {&message->args, &message->kwargs}) {
    auto parsed = ParseJson(jobs::PyJsonDumps(*value), "dumps");
    MINERU_CHECK(parsed.has_value() && *parsed == *value, "{}", jobs::PyJsonDumps(*value));
    (void)jobs::PyRepr(*value);
  }
  const std::string meta = jobs::CeleryResultMeta("SUCCESS", message->kwargs, std::nullopt,
                                                  message->id, std::chrono::system_clock::now());
  auto stored = ParseJson(meta, "meta");
  MINERU_CHECK(stored.has_value(), "{}", meta);
  MINERU_CHECK(jobs::StoredCeleryStatus(meta) == "SUCCESS");
  return 0;
}
