// SPDX-License-Identifier: Apache-2.0
#include "celery/celery_amqp.h"

#include <type_traits>
#include <variant>

namespace mineru::jobs {

Json AmqpToJson(const AmqpValue& value) {
  return std::visit(
      [](const auto& x) -> Json {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::nullptr_t>) {
          return Json(nullptr);
        } else if constexpr (std::is_same_v<T, AmqpValue::List>) {
          Json list = Json::array();
          for (const AmqpValue& item : x) list.push_back(AmqpToJson(item));
          return list;
        } else if constexpr (std::is_same_v<T, AmqpValue::Table>) {
          Json table = Json::object();
          for (const AmqpField& f : x) table[f.key] = AmqpToJson(f.value);
          return table;
        } else {
          return Json(x);
        }
      },
      value.value);
}

AmqpValue JsonToAmqp(const Json& value) {
  AmqpValue out;
  switch (value.type()) {
    case Json::value_t::boolean:
      out.value = value.get<bool>();
      break;
    case Json::value_t::number_integer:
      out.value = value.get<int64_t>();
      break;
    case Json::value_t::number_unsigned:
      out.value = static_cast<int64_t>(value.get<uint64_t>());
      break;
    case Json::value_t::number_float:
      out.value = value.get<double>();
      break;
    case Json::value_t::string:
      out.value = value.get<std::string>();
      break;
    case Json::value_t::array: {
      AmqpValue::List list;
      for (const Json& item : value) list.push_back(JsonToAmqp(item));
      out.value = std::move(list);
      break;
    }
    case Json::value_t::object: {
      AmqpValue::Table table;
      for (const auto& [key, item] : value.items()) table.push_back({key, JsonToAmqp(item)});
      out.value = std::move(table);
      break;
    }
    default:
      out.value = nullptr;
  }
  return out;
}

CeleryEnvelope CeleryFromAmqp(const Message& m) {
  CeleryEnvelope e;
  e.content_type = m.content_type;
  e.content_encoding = m.content_encoding;
  e.correlation_id = m.correlation_id;
  e.reply_to = m.reply_to;
  if (m.priority) e.priority = *m.priority;
  e.delivery_mode = m.delivery_mode;
  e.headers = AmqpToJson(AmqpValue(m.headers));
  e.body = m.body;
  return e;
}

Message CeleryToAmqp(const CeleryEnvelope& e) {
  Message m;
  m.body = e.body;
  m.content_type = e.content_type;
  m.content_encoding = e.content_encoding;
  m.correlation_id = e.correlation_id;
  m.reply_to = e.reply_to;
  if (e.priority) m.priority = static_cast<uint8_t>(*e.priority);
  m.delivery_mode = static_cast<uint8_t>(e.delivery_mode);
  for (const auto& [key, item] : e.headers.items()) m.headers.push_back({key, JsonToAmqp(item)});
  return m;
}

}  // namespace mineru::jobs
