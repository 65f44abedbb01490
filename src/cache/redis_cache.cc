// SPDX-License-Identifier: Apache-2.0
#include "cache/redis_cache.h"

#include "cache/document_codec.h"

namespace mineru::jobs {

Result<std::unique_ptr<RedisCache>> RedisCache::Create(RedisCacheOptions options) {
  if (options.ttl.count() < 1) {
    return Fail(ErrorCode::kInvalidArgument, "the Redis cache TTL must be at least 1 s, not {} s",
                options.ttl.count());
  }
  if (options.max_value_bytes < 1) {
    return Fail(ErrorCode::kInvalidArgument, "the Redis cache value cap must be at least 1 byte");
  }
  return std::unique_ptr<RedisCache>(new RedisCache(std::move(options)));
}

std::string RedisCache::RedisKey(std::string_view key) {
  std::string out(kRedisDocumentKeyPrefix);
  out.append(key);
  return out;
}

Result<std::optional<DocumentOutputs>> RedisCache::Get(const std::string& key) {
  // GETRANGE rather than GET: it returns at most max_value_bytes + 1 bytes, so an oversized
  // value is recognised without reading all of it. A missing key reads as "", which no encoding
  // is.
  MINERU_ASSIGN_OR_RETURN(
      RedisReply reply,
      client_.Command({"GETRANGE", RedisKey(key), "0", std::to_string(options_.max_value_bytes)}));
  if (reply.type != RedisReply::Type::kString) {
    return Fail(ErrorCode::kCorrupt, "Redis answered GETRANGE with a reply of type {}",
                static_cast<int>(reply.type));
  }
  if (reply.str.empty()) return std::optional<DocumentOutputs>();
  if (reply.str.size() > options_.max_value_bytes) {
    return Fail(ErrorCode::kResourceExhausted,
                "the cached document is larger than max_value_bytes ({} bytes)",
                options_.max_value_bytes);
  }
  MINERU_ASSIGN_OR_RETURN(DocumentOutputs outputs, ParseDocumentOutputs(reply.str));
  return std::optional<DocumentOutputs>(std::move(outputs));
}

Status RedisCache::Put(const std::string& key, const DocumentOutputs& outputs,
                       std::chrono::seconds ttl) {
  if (ttl.count() < 1) {
    return Fail(ErrorCode::kInvalidArgument, "a Redis TTL must be at least 1 s, not {} s",
                ttl.count());
  }
  std::string value = SerializeDocumentOutputs(outputs);
  if (value.size() > options_.max_value_bytes) {
    return Fail(ErrorCode::kResourceExhausted,
                "the document's encoding ({} bytes) exceeds max_value_bytes ({} bytes)",
                value.size(), options_.max_value_bytes);
  }
  MINERU_ASSIGN_OR_RETURN(
      RedisReply reply,
      client_.Command({"SETEX", RedisKey(key), std::to_string(ttl.count()), std::move(value)}));
  (void)reply;  // "OK"; errors came back as kInternal
  return OkStatus();
}

}  // namespace mineru::jobs
