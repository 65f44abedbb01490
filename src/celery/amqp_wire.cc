// SPDX-License-Identifier: Apache-2.0
// Field tables and basic properties: the pure conversions of the AMQP client.
#include "celery/amqp_wire.h"

#include <cstring>
#include <limits>
#include <vector>

namespace mineru::jobs::amqp_wire {
namespace {

Result<amqp_field_value_t> EncodeValue(const AmqpValue& value, Pool& pool, int depth);

Result<amqp_table_t> EncodeTableAt(const AmqpTable& table, Pool& pool, int depth) {
  if (depth > kMaxFieldDepth) {
    return Fail(ErrorCode::kInvalidArgument, "AMQP table nested deeper than {} levels",
                kMaxFieldDepth);
  }
  amqp_table_t out;
  out.num_entries = static_cast<int>(table.size());
  out.entries = nullptr;
  if (table.empty()) return out;
  out.entries = static_cast<amqp_table_entry_t*>(
      amqp_pool_alloc(pool.get(), sizeof(amqp_table_entry_t) * table.size()));
  if (out.entries == nullptr) return Fail(ErrorCode::kResourceExhausted, "AMQP table: no memory");
  for (size_t i = 0; i < table.size(); ++i) {
    if (table[i].key.size() > 128) {  // AMQP's shortstr limit for field names
      return Fail(ErrorCode::kInvalidArgument, "AMQP field name longer than 128 bytes");
    }
    out.entries[i].key = Borrow(table[i].key);
    MINERU_ASSIGN_OR_RETURN(out.entries[i].value, EncodeValue(table[i].value, pool, depth));
  }
  return out;
}

Result<amqp_field_value_t> EncodeValue(const AmqpValue& value, Pool& pool, int depth) {
  amqp_field_value_t out;
  std::memset(&out, 0, sizeof(out));
  if (value.is_null()) {
    out.kind = AMQP_FIELD_KIND_VOID;
  } else if (const bool* b = std::get_if<bool>(&value.value)) {
    out.kind = AMQP_FIELD_KIND_BOOLEAN;
    out.value.boolean = *b ? 1 : 0;
  } else if (const int64_t* i = value.integer()) {
    if (*i >= std::numeric_limits<int32_t>::min() && *i <= std::numeric_limits<int32_t>::max()) {
      out.kind = AMQP_FIELD_KIND_I32;
      out.value.i32 = static_cast<int32_t>(*i);
    } else {
      out.kind = AMQP_FIELD_KIND_I64;
      out.value.i64 = *i;
    }
  } else if (const double* d = std::get_if<double>(&value.value)) {
    out.kind = AMQP_FIELD_KIND_F64;
    out.value.f64 = *d;
  } else if (const std::string* s = value.string()) {
    out.kind = AMQP_FIELD_KIND_UTF8;
    out.value.bytes = Borrow(*s);
  } else if (const AmqpValue::List* list = value.list()) {
    if (depth + 1 > kMaxFieldDepth) {
      return Fail(ErrorCode::kInvalidArgument, "AMQP list nested deeper than {} levels",
                  kMaxFieldDepth);
    }
    out.kind = AMQP_FIELD_KIND_ARRAY;
    out.value.array.num_entries = static_cast<int>(list->size());
    out.value.array.entries = nullptr;
    if (!list->empty()) {
      out.value.array.entries = static_cast<amqp_field_value_t*>(
          amqp_pool_alloc(pool.get(), sizeof(amqp_field_value_t) * list->size()));
      if (out.value.array.entries == nullptr) {
        return Fail(ErrorCode::kResourceExhausted, "AMQP list: no memory");
      }
      for (size_t i = 0; i < list->size(); ++i) {
        MINERU_ASSIGN_OR_RETURN(out.value.array.entries[i],
                                EncodeValue((*list)[i], pool, depth + 1));
      }
    }
  } else if (const AmqpTable* table = value.table()) {
    out.kind = AMQP_FIELD_KIND_TABLE;
    MINERU_ASSIGN_OR_RETURN(out.value.table, EncodeTableAt(*table, pool, depth + 1));
  }
  return out;
}

Result<AmqpValue> DecodeValue(const amqp_field_value_t& value, int depth);

Result<AmqpTable> DecodeTableAt(const amqp_table_t& table, int depth) {
  if (depth > kMaxFieldDepth) {
    return Fail(ErrorCode::kCorrupt, "AMQP table nested deeper than {} levels", kMaxFieldDepth);
  }
  AmqpTable out;
  out.reserve(table.num_entries > 0 ? table.num_entries : 0);
  for (int i = 0; i < table.num_entries; ++i) {
    MINERU_ASSIGN_OR_RETURN(AmqpValue value, DecodeValue(table.entries[i].value, depth));
    out.push_back({ToString(table.entries[i].key), std::move(value)});
  }
  return out;
}

Result<AmqpValue> DecodeValue(const amqp_field_value_t& value, int depth) {
  switch (value.kind) {
    case AMQP_FIELD_KIND_VOID:
      return AmqpValue(nullptr);
    case AMQP_FIELD_KIND_BOOLEAN:
      return AmqpValue(value.value.boolean != 0);
    case AMQP_FIELD_KIND_I8:
      return AmqpValue(int64_t{value.value.i8});
    case AMQP_FIELD_KIND_U8:
      return AmqpValue(int64_t{value.value.u8});
    case AMQP_FIELD_KIND_I16:
      return AmqpValue(int64_t{value.value.i16});
    case AMQP_FIELD_KIND_U16:
      return AmqpValue(int64_t{value.value.u16});
    case AMQP_FIELD_KIND_I32:
      return AmqpValue(int64_t{value.value.i32});
    case AMQP_FIELD_KIND_U32:
      return AmqpValue(int64_t{value.value.u32});
    case AMQP_FIELD_KIND_I64:
      return AmqpValue(value.value.i64);
    case AMQP_FIELD_KIND_U64:
    case AMQP_FIELD_KIND_TIMESTAMP:
      if (value.value.u64 > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        return Fail(ErrorCode::kCorrupt, "AMQP unsigned integer beyond int64");
      }
      return AmqpValue(static_cast<int64_t>(value.value.u64));
    case AMQP_FIELD_KIND_F32:
      return AmqpValue(double{value.value.f32});
    case AMQP_FIELD_KIND_F64:
      return AmqpValue(value.value.f64);
    case AMQP_FIELD_KIND_UTF8:
    case AMQP_FIELD_KIND_BYTES:
      return AmqpValue(ToString(value.value.bytes));
    case AMQP_FIELD_KIND_ARRAY: {
      if (depth + 1 > kMaxFieldDepth) {
        return Fail(ErrorCode::kCorrupt, "AMQP list nested deeper than {} levels", kMaxFieldDepth);
      }
      AmqpValue::List list;
      for (int i = 0; i < value.value.array.num_entries; ++i) {
        MINERU_ASSIGN_OR_RETURN(AmqpValue item,
                                DecodeValue(value.value.array.entries[i], depth + 1));
        list.push_back(std::move(item));
      }
      return AmqpValue(std::move(list));
    }
    case AMQP_FIELD_KIND_TABLE: {
      MINERU_ASSIGN_OR_RETURN(AmqpTable table, DecodeTableAt(value.value.table, depth + 1));
      return AmqpValue(std::move(table));
    }
    default:  // decimals: no client of ours sends them
      return Fail(ErrorCode::kUnsupported, "AMQP field kind '{}' not supported",
                  static_cast<char>(value.kind));
  }
}

void SetString(const std::string& text, amqp_flags_t flag, amqp_bytes_t* field,
               amqp_basic_properties_t* out) {
  if (text.empty()) return;
  *field = Borrow(text);
  out->_flags |= flag;
}

void GetString(const amqp_basic_properties_t& in, amqp_flags_t flag, amqp_bytes_t field,
               std::string* out) {
  if (in._flags & flag) *out = ToString(field);
}

}  // namespace

Result<amqp_table_t> EncodeTable(const AmqpTable& table, Pool& pool) {
  return EncodeTableAt(table, pool, 1);
}

Result<AmqpTable> DecodeTable(const amqp_table_t& table) { return DecodeTableAt(table, 1); }

Status EncodeProperties(const Message& message, Pool& pool, amqp_basic_properties_t* out) {
  std::memset(out, 0, sizeof(*out));
  SetString(message.content_type, AMQP_BASIC_CONTENT_TYPE_FLAG, &out->content_type, out);
  SetString(message.content_encoding, AMQP_BASIC_CONTENT_ENCODING_FLAG, &out->content_encoding,
            out);
  SetString(message.correlation_id, AMQP_BASIC_CORRELATION_ID_FLAG, &out->correlation_id, out);
  SetString(message.reply_to, AMQP_BASIC_REPLY_TO_FLAG, &out->reply_to, out);
  SetString(message.message_id, AMQP_BASIC_MESSAGE_ID_FLAG, &out->message_id, out);
  SetString(message.expiration, AMQP_BASIC_EXPIRATION_FLAG, &out->expiration, out);
  out->delivery_mode = message.delivery_mode;
  out->_flags |= AMQP_BASIC_DELIVERY_MODE_FLAG;
  if (message.priority) {
    out->priority = *message.priority;
    out->_flags |= AMQP_BASIC_PRIORITY_FLAG;
  }
  if (!message.headers.empty()) {
    MINERU_ASSIGN_OR_RETURN(out->headers, EncodeTable(message.headers, pool));
    out->_flags |= AMQP_BASIC_HEADERS_FLAG;
  }
  return OkStatus();
}

Status DecodeProperties(const amqp_basic_properties_t& in, Message* message) {
  GetString(in, AMQP_BASIC_CONTENT_TYPE_FLAG, in.content_type, &message->content_type);
  GetString(in, AMQP_BASIC_CONTENT_ENCODING_FLAG, in.content_encoding, &message->content_encoding);
  GetString(in, AMQP_BASIC_CORRELATION_ID_FLAG, in.correlation_id, &message->correlation_id);
  GetString(in, AMQP_BASIC_REPLY_TO_FLAG, in.reply_to, &message->reply_to);
  GetString(in, AMQP_BASIC_MESSAGE_ID_FLAG, in.message_id, &message->message_id);
  GetString(in, AMQP_BASIC_EXPIRATION_FLAG, in.expiration, &message->expiration);
  message->delivery_mode =
      (in._flags & AMQP_BASIC_DELIVERY_MODE_FLAG) ? in.delivery_mode : kTransientDelivery;
  if (in._flags & AMQP_BASIC_PRIORITY_FLAG) message->priority = in.priority;
  if (in._flags & AMQP_BASIC_HEADERS_FLAG) {
    MINERU_ASSIGN_OR_RETURN(message->headers, DecodeTable(in.headers));
  }
  return OkStatus();
}

std::string DescribeClose(uint16_t reply_code, amqp_bytes_t reply_text) {
  return std::to_string(reply_code) + " " + ToString(reply_text);
}

}  // namespace mineru::jobs::amqp_wire
