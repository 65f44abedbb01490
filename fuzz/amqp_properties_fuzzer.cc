// SPDX-License-Identifier: Apache-2.0
// AMQP content-header properties as a delivery brings them: rabbitmq-c's decoder
// (amqp_decode_properties, what amqp_simple_wait_frame runs on a content header's property
// bytes), our conversion (celery/amqp_wire.h DecodeProperties, the header table's depth limit),
// the headers as Celery JSON (celery/celery_amqp.h) and the Celery decoding of a message with
// those headers and a valid body (celery/celery_protocol.h). Input: the property bytes (flags,
// then the fields the flags name).
// Invariants: nothing throws; a decoded message that our encoder accepts decodes back to the
// same message (the publish path, EncodeProperties, against the consume path).
#include <amqp.h>
#include <amqp_framing.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <variant>

#include "celery/amqp_client.h"
#include "celery/amqp_wire.h"
#include "celery/celery_amqp.h"
#include "celery/celery_protocol.h"
#include "fuzz/fuzz_util.h"

namespace {

using namespace mineru;
using jobs::AmqpValue;

// rabbitmq-c's decoding: nullopt where it refuses the bytes.
std::optional<jobs::Message> Decode(std::string_view bytes) {
  jobs::amqp_wire::Pool pool;
  void* decoded = nullptr;
  const int status = amqp_decode_properties(AMQP_BASIC_CLASS, pool.get(),
                                            jobs::amqp_wire::Borrow(bytes), &decoded);
  if (status < 0 || decoded == nullptr) return std::nullopt;
  jobs::Message message;
  if (!jobs::amqp_wire::DecodeProperties(*static_cast<amqp_basic_properties_t*>(decoded),
                                         &message)) {
    return std::nullopt;
  }
  return message;
}

// Equality with NaN equal to itself (a NaN header value survives the trip as a NaN).
bool Same(const AmqpValue& a, const AmqpValue& b);
bool Same(const jobs::AmqpTable& a, const jobs::AmqpTable& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].key != b[i].key || !Same(a[i].value, b[i].value)) return false;
  }
  return true;
}
bool Same(const AmqpValue& a, const AmqpValue& b) {
  if (a.value.index() != b.value.index()) return false;
  if (const auto* x = std::get_if<double>(&a.value)) {
    const double y = std::get<double>(b.value);
    return (std::isnan(*x) && std::isnan(y)) || *x == y;
  }
  if (const auto* x = a.list()) {
    const auto& y = *b.list();
    if (x->size() != y.size()) return false;
    for (size_t i = 0; i < x->size(); ++i) {
      if (!Same((*x)[i], y[i])) return false;
    }
    return true;
  }
  if (const auto* x = a.table()) return Same(*x, *b.table());
  return a == b;
}

void CheckRoundTrip(const jobs::Message& message) {
  jobs::amqp_wire::Pool pool;
  amqp_basic_properties_t properties;
  if (!jobs::amqp_wire::EncodeProperties(message, pool, &properties)) return;  // e.g. long keys
  static std::string buffer(1 << 20, '\0');  // twice the largest input (-max_len) and more
  amqp_bytes_t out = jobs::amqp_wire::Borrow(buffer);
  const int written = amqp_encode_properties(AMQP_BASIC_CLASS, &properties, out);
  if (written < 0) return;  // larger than the buffer
  auto again = Decode(std::string_view(buffer).substr(0, static_cast<size_t>(written)));
  MINERU_CHECK(again.has_value(), "encoded properties do not decode");
  MINERU_CHECK(again->content_type == message.content_type &&
               again->content_encoding == message.content_encoding &&
               again->correlation_id == message.correlation_id &&
               again->reply_to == message.reply_to && again->message_id == message.message_id &&
               again->expiration == message.expiration && again->priority == message.priority &&
               again->delivery_mode == message.delivery_mode);
  MINERU_CHECK(Same(again->headers, message.headers), "headers changed on the round trip");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::optional<jobs::Message> message = Decode(fuzz::AsText(data, size));
  if (!message) return 0;
  CheckRoundTrip(*message);
  message->body = R"([["doc", 1], {"lang": "en"}, {"callbacks": null, "chain": null}])";
  const jobs::CeleryEnvelope envelope = jobs::CeleryFromAmqp(*message);
  (void)jobs::DecodeCeleryMessage(envelope);
  return 0;
}
