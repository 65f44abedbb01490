// SPDX-License-Identifier: Apache-2.0
// An AMQP message as the client (celery/amqp_client.h) and its wire conversions
// (celery/amqp_wire.h) both see it: the body, the basic properties and the header table's field
// values. A header of its own so that the conversions need nothing of the client.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace mineru::jobs {

// A header or argument value: the AMQP field types Celery's headers need (strings, integers,
// booleans, null, lists and nested tables), plus doubles. Integers of every wire width decode to
// int64; byte arrays decode to strings.
struct AmqpField;
struct AmqpValue {
  using List = std::vector<AmqpValue>;
  using Table = std::vector<AmqpField>;  // in wire order; keys are unique
  std::variant<std::nullptr_t, bool, int64_t, double, std::string, List, Table> value;

  // Defined below AmqpField: constructing the variant needs every alternative complete (clang
  // instantiates it here, GCC only where a constructor is used).
  AmqpValue();
  AmqpValue(std::nullptr_t);
  AmqpValue(bool b);
  AmqpValue(int i);
  AmqpValue(int64_t i);
  AmqpValue(double d);
  AmqpValue(const char* s);
  AmqpValue(std::string s);
  AmqpValue(List l);
  AmqpValue(Table t);

  bool is_null() const { return std::holds_alternative<std::nullptr_t>(value); }
  const std::string* string() const { return std::get_if<std::string>(&value); }
  const int64_t* integer() const { return std::get_if<int64_t>(&value); }
  const List* list() const { return std::get_if<List>(&value); }
  const Table* table() const { return std::get_if<Table>(&value); }
  friend bool operator==(const AmqpValue&, const AmqpValue&) = default;
};
struct AmqpField {
  std::string key;
  AmqpValue value;
  friend bool operator==(const AmqpField&, const AmqpField&) = default;
};
inline AmqpValue::AmqpValue() : value(nullptr) {}
inline AmqpValue::AmqpValue(std::nullptr_t) : value(nullptr) {}
inline AmqpValue::AmqpValue(bool b) : value(b) {}
inline AmqpValue::AmqpValue(int i) : value(int64_t{i}) {}
inline AmqpValue::AmqpValue(int64_t i) : value(i) {}
inline AmqpValue::AmqpValue(double d) : value(d) {}
inline AmqpValue::AmqpValue(const char* s) : value(std::string(s)) {}
inline AmqpValue::AmqpValue(std::string s) : value(std::move(s)) {}
inline AmqpValue::AmqpValue(List l) : value(std::move(l)) {}
inline AmqpValue::AmqpValue(Table t) : value(std::move(t)) {}
using AmqpTable = AmqpValue::Table;

// Deepest nesting of lists and tables (a header table counts as level 1) accepted in either
// direction: Publish refuses deeper headers, and a deeper delivery is rejected as malformed, so
// outside bytes cannot drive the conversion's recursion arbitrarily deep.
inline constexpr int kMaxAmqpFieldDepth = 32;

// The value under `key`, or null when absent.
inline const AmqpValue* FindField(const AmqpTable& table, std::string_view key) {
  for (const AmqpField& field : table) {
    if (field.key == key) return &field.value;
  }
  return nullptr;
}

inline constexpr uint8_t kTransientDelivery = 1;
inline constexpr uint8_t kPersistentDelivery = 2;

// A message's body and basic properties (empty strings are left out on the wire).
struct Message {
  std::string body;
  std::string content_type;
  std::string content_encoding;
  std::string correlation_id;
  std::string reply_to;
  std::string message_id;
  std::string expiration;           // per-message TTL in milliseconds, as text
  std::optional<uint8_t> priority;  // honoured only by queues with x-max-priority
  uint8_t delivery_mode = kPersistentDelivery;
  AmqpTable headers;
};

}  // namespace mineru::jobs
