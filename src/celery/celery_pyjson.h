// SPDX-License-Identifier: Apache-2.0
// Python-compatible text for Celery interop: JSON exactly as Python's json.dumps writes it (the
// serializer kombu and Celery's result backend use) and repr() text for Celery's argsrepr and
// kwargsrepr headers.
#pragma once

#include <string>

#include "base/json.h"

namespace mineru::jobs {

// json.dumps(value) with Python's defaults: ", " and ": " separators, ensure_ascii (every
// character outside ' '..'~' is escaped as \uXXXX, lower-case hex, surrogate pairs above the BMP),
// floats as repr() (1e+20, 0.0001, 1e-05, 2.5, 1.0), NaN/Infinity as Python writes them. Bytes
// that are not UTF-8 are written as U+FFFD. Object keys follow Json's (sorted) order, with one
// exception: an exception record (exactly the keys exc_type, exc_message, exc_module) is written
// in Celery's order so that stored FAILURE/REVOKED results match Celery byte for byte.
std::string PyJsonDumps(const Json& value);

// repr() of the Python value the JSON decodes to: 'str', True/False/None, [..], {'k': v}.
// Non-ASCII printable characters are kept, as Python 3 does.
std::string PyRepr(const Json& value);

}  // namespace mineru::jobs
