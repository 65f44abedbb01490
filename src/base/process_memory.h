// SPDX-License-Identifier: Apache-2.0
// This process's resident memory, from /proc/self/status (Linux): for benchmarks that report
// the peak memory of one pass, and for metrics.
#pragma once

#include <cstdint>
#include <optional>

namespace mineru {

// VmRSS and VmHWM in bytes; nullopt where /proc is unavailable.
std::optional<int64_t> CurrentRssBytes();
std::optional<int64_t> PeakRssBytes();
// Resets VmHWM to the current RSS (writes 5 to /proc/self/clear_refs); false if refused.
bool ResetPeakRss();

}  // namespace mineru
