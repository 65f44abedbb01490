// SPDX-License-Identifier: Apache-2.0
#include "base/process_memory.h"

#include <cstdio>
#include <cstring>

namespace mineru {
namespace {

std::optional<int64_t> StatusField(const char* field) {
  std::FILE* f = std::fopen("/proc/self/status", "r");
  if (f == nullptr) return std::nullopt;
  char line[256];
  std::optional<int64_t> bytes;
  const size_t n = std::strlen(field);
  while (std::fgets(line, sizeof line, f) != nullptr) {
    if (std::strncmp(line, field, n) == 0 && line[n] == ':') {
      long long kib = 0;
      if (std::sscanf(line + n + 1, "%lld", &kib) == 1) bytes = kib * 1024;
      break;
    }
  }
  std::fclose(f);
  return bytes;
}

}  // namespace

std::optional<int64_t> CurrentRssBytes() { return StatusField("VmRSS"); }
std::optional<int64_t> PeakRssBytes() { return StatusField("VmHWM"); }

bool ResetPeakRss() {
  std::FILE* f = std::fopen("/proc/self/clear_refs", "w");
  if (f == nullptr) return false;
  const bool ok = std::fputs("5", f) >= 0;
  return std::fclose(f) == 0 && ok;
}

}  // namespace mineru
