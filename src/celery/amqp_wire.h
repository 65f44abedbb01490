// SPDX-License-Identifier: Apache-2.0
// Conversions between the AMQP types of amqp_message.h and rabbitmq-c's wire structures: field
// tables (headers, queue arguments) and basic properties. Internal to the AMQP client; only .cc
// files include it, so rabbitmq-c stays out of the public headers.
#pragma once

#include <amqp.h>
#include <amqp_framing.h>

#include <string>
#include <string_view>

#include "base/status.h"
#include "celery/amqp_message.h"

namespace mineru::jobs::amqp_wire {

inline constexpr int kMaxFieldDepth = kMaxAmqpFieldDepth;

// Owns the memory of the wire structures built by the Encode functions.
class Pool {
 public:
  Pool() { init_amqp_pool(&pool_, 4096); }
  ~Pool() { empty_amqp_pool(&pool_); }
  Pool(const Pool&) = delete;
  Pool& operator=(const Pool&) = delete;
  amqp_pool_t* get() { return &pool_; }

 private:
  amqp_pool_t pool_;
};

inline std::string_view View(amqp_bytes_t bytes) {
  return bytes.len == 0 ? std::string_view()
                        : std::string_view(static_cast<const char*>(bytes.bytes), bytes.len);
}
inline std::string ToString(amqp_bytes_t bytes) { return std::string(View(bytes)); }
// Borrows `text` (it must outlive the returned bytes).
inline amqp_bytes_t Borrow(std::string_view text) {
  amqp_bytes_t bytes;
  bytes.len = text.size();
  bytes.bytes = const_cast<char*>(text.data());
  return bytes;
}

// Field tables. Encoded integers use the narrowest of signed 32/64 bits (as py-amqp does, so
// arguments compare equal to a Python client's declaration).
Result<amqp_table_t> EncodeTable(const AmqpTable& table, Pool& pool);
Result<AmqpTable> DecodeTable(const amqp_table_t& table);

// Properties of `message` (headers included) into `out`, borrowing the message's strings.
Status EncodeProperties(const Message& message, Pool& pool, amqp_basic_properties_t* out);
// Properties from a content header into `message` (the body is left alone).
Status DecodeProperties(const amqp_basic_properties_t& properties, Message* message);

// "405 RESOURCE_LOCKED - ..." and the like, from a broker's close method.
std::string DescribeClose(uint16_t reply_code, amqp_bytes_t reply_text);

}  // namespace mineru::jobs::amqp_wire
