// SPDX-License-Identifier: Apache-2.0
// What a running `mineru-cpp serve` holds, for the long-document and soak tests: its resident
// memory and open descriptors from /proc/<pid>, and the values of its /metrics.
#pragma once

#include <dirent.h>
#include <sys/types.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace mineru::apps::testing {

struct ProcessUsage {
  int64_t rss_bytes = -1;       // VmRSS
  int64_t peak_rss_bytes = -1;  // VmHWM: the peak over the process's life
  int open_fds = -1;            // entries of /proc/<pid>/fd
};

inline ProcessUsage UsageOf(pid_t pid) {
  ProcessUsage usage;
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);) {
    const auto kilobytes = [&] { return std::strtoll(line.c_str() + 6, nullptr, 10) * 1024; };
    if (line.rfind("VmRSS:", 0) == 0) usage.rss_bytes = kilobytes();
    if (line.rfind("VmHWM:", 0) == 0) usage.peak_rss_bytes = kilobytes();
  }
  if (DIR* dir = ::opendir(("/proc/" + std::to_string(pid) + "/fd").c_str())) {
    usage.open_fds = 0;
    while (dirent* entry = ::readdir(dir)) {
      if (entry->d_name[0] != '.') ++usage.open_fds;
    }
    ::closedir(dir);
  }
  return usage;
}

inline double Megabytes(int64_t bytes) { return static_cast<double>(bytes) / (1 << 20); }

// The value of the first sample of `metric` in a /metrics text whose labels contain `labels`;
// -1 when there is none.
inline double MetricSample(const std::string& metrics, const std::string& metric,
                           const std::string& labels = "") {
  std::istringstream lines(metrics);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(metric, 0) != 0 || line.size() <= metric.size()) continue;
    const char next = line[metric.size()];
    if (next != ' ' && next != '{') continue;  // another metric with this prefix
    if (line.find(labels) == std::string::npos) continue;
    return std::strtod(line.c_str() + line.rfind(' ') + 1, nullptr);
  }
  return -1;
}

}  // namespace mineru::apps::testing
