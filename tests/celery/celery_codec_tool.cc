// SPDX-License-Identifier: Apache-2.0
// Command-line face of the Celery codec for the live interop test (celery_fixtures.py interop):
//   celery_codec_tool decode  < envelope JSON   -> decoded message JSON (exit 1 + error on refusal)
//   celery_codec_tool encode  < {task,id,args,kwargs,options} -> envelope JSON
//   celery_codec_tool meta    < {status,result,id} -> {"raw": stored meta text}
// The envelope JSON is the fixture format documented in celery_fixtures.py.
#include <chrono>
#include <iostream>
#include <iterator>
#include <string>

#include "base/json.h"
#include "celery/celery_protocol.h"

namespace {

using mineru::Json;
using namespace mineru::jobs;

int Decode(const Json& in) {
  CeleryEnvelope env;
  const Json& props = in.at("properties");
  env.content_type = props.value("content_type", "");
  env.content_encoding = props.value("content_encoding", "");
  env.correlation_id = props.value("correlation_id", "");
  if (props.contains("priority") && props["priority"].is_number_integer()) {
    env.priority = props["priority"].get<int>();
  }
  env.headers = in.at("headers");
  env.body = in.at("body").get<std::string>();
  auto msg = DecodeCeleryMessage(env);
  if (!msg) {
    std::cout << Json{{"error", msg.error().ToString()}}.dump() << "\n";
    return 1;
  }
  const auto opt = [](const std::optional<std::string>& s) { return s ? Json(*s) : Json(); };
  Json out = {{"id", msg->id},           {"task", msg->task},       {"args", msg->args},
              {"kwargs", msg->kwargs},   {"eta", opt(msg->eta)},    {"expires", opt(msg->expires)},
              {"retries", msg->retries}, {"root_id", msg->root_id}, {"origin", msg->origin}};
  out["priority"] = msg->priority ? Json(*msg->priority) : Json();
  std::cout << out.dump() << "\n";
  return 0;
}

int Encode(const Json& in) {
  CeleryPublishOptions options;
  const Json& o = in.at("options");
  if (o.contains("eta")) options.eta = o["eta"].get<std::string>();
  if (o.contains("expires")) options.expires = o["expires"].get<std::string>();
  if (o.contains("priority")) options.priority = o["priority"].get<int>();
  if (o.contains("retries")) options.retries = o["retries"].get<int>();
  const CeleryEnvelope env =
      EncodeCeleryMessage(in.at("task").get<std::string>(), in.at("id").get<std::string>(),
                          in.at("args"), in.at("kwargs"), options);
  Json out = {{"properties",
               {{"content_type", env.content_type},
                {"content_encoding", env.content_encoding},
                {"correlation_id", env.correlation_id},
                {"priority", env.priority ? Json(*env.priority) : Json()},
                {"delivery_mode", env.delivery_mode},
                {"reply_to", env.reply_to}}},
              {"headers", env.headers},
              {"body", env.body}};
  std::cout << out.dump() << "\n";
  return 0;
}

int Meta(const Json& in) {
  const std::string status = in.at("status").get<std::string>();
  Json result = in.at("result");
  if (status == "FAILURE") result = CeleryExceptionResult("ValueError", result.get<std::string>());
  if (status == "REVOKED") result = CeleryRevokedResult(result.get<std::string>());
  std::cout << Json{{"raw",
                     CeleryResultMeta(status, result, std::nullopt, in.at("id").get<std::string>(),
                                      std::chrono::system_clock::now())}}
                   .dump()
            << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: celery_codec_tool decode|encode|meta < json\n";
    return 2;
  }
  const std::string text((std::istreambuf_iterator<char>(std::cin)),
                         std::istreambuf_iterator<char>());
  auto in = mineru::ParseJson(text, "stdin");
  if (!in) {
    std::cerr << in.error().ToString() << "\n";
    return 2;
  }
  try {
    const std::string mode = argv[1];
    if (mode == "decode") return Decode(*in);
    if (mode == "encode") return Encode(*in);
    if (mode == "meta") return Meta(*in);
  } catch (const std::exception& e) {  // malformed tool input (a test harness error)
    std::cerr << "bad tool input: " << e.what() << "\n";
    return 2;
  }
  std::cerr << "unknown mode " << argv[1] << "\n";
  return 2;
}
