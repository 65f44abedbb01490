// SPDX-License-Identifier: Apache-2.0
// Celery messages (celery/celery_protocol.h) to and from AMQP messages (celery/amqp_client.h):
// properties one to one, headers between Json and AMQP field tables (null, bool, integer,
// float, string, list, table).
#pragma once

#include "base/json.h"
#include "celery/amqp_client.h"
#include "celery/celery_protocol.h"

namespace mineru::jobs {

Json AmqpToJson(const AmqpValue& value);
AmqpValue JsonToAmqp(const Json& value);

CeleryEnvelope CeleryFromAmqp(const Message& message);
Message CeleryToAmqp(const CeleryEnvelope& envelope);

}  // namespace mineru::jobs
