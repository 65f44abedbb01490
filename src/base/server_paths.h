// SPDX-License-Identifier: Apache-2.0
// Error texts that leave the process (HTTP answers, Celery results) name files by their names
// only: a client has no business knowing the server's directories (work directories, task
// inputs, model files), and a path tells an attacker what the machine holds.
#pragma once

#include <string>
#include <string_view>

namespace mineru {

// `text` with every absolute filesystem path ("/var/lib/mineru/tasks/<id>/input/a.pdf") cut to
// its last component ("a.pdf"). A path starts with '/' at the start of the text or after a
// space, quote or opening bracket, holds at least two '/', and runs to the next space, quote,
// closing bracket, comma, semicolon or ": "; URLs ("http://h/a/b") and media types
// ("image/png") are not paths. Linear in the text.
std::string WithoutServerPaths(std::string_view text);

}  // namespace mineru
