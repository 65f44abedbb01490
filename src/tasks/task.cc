// SPDX-License-Identifier: Apache-2.0
#include "tasks/task.h"

#include <fmt/format.h>

#include <cctype>
#include <mutex>
#include <random>

namespace mineru::jobs {

std::string NewUuid4() {
  static std::mutex mutex;
  static std::mt19937_64 rng{std::random_device{}()};
  uint64_t hi, lo;
  {
    std::lock_guard lock(mutex);
    hi = rng();
    lo = rng();
  }
  hi = (hi & ~0xF000ull) | 0x4000ull;        // version 4
  lo = (lo & ~(3ull << 62)) | (2ull << 62);  // RFC 4122 variant
  return fmt::format("{:08x}-{:04x}-{:04x}-{:04x}-{:012x}", hi >> 32, (hi >> 16) & 0xFFFF,
                     hi & 0xFFFF, lo >> 48, lo & 0xFFFFFFFFFFFFull);
}

bool LooksLikeTaskId(std::string_view text) {
  if (text.size() != 36) return false;
  for (size_t i = 0; i < text.size(); ++i) {
    const bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash != (text[i] == '-')) return false;
    if (!dash && !std::isxdigit(static_cast<unsigned char>(text[i]))) return false;
  }
  return true;
}

std::string_view TaskStatusName(TaskStatus status) {
  switch (status) {
    case TaskStatus::kPending:
      return "pending";
    case TaskStatus::kProcessing:
      return "processing";
    case TaskStatus::kCompleted:
      return "completed";
    case TaskStatus::kFailed:
      return "failed";
    case TaskStatus::kCancelled:
      return "cancelled";
  }
  return "unknown";
}

}  // namespace mineru::jobs
