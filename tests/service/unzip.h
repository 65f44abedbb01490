// SPDX-License-Identifier: Apache-2.0
// The entries of a ZIP held in memory, read back with libzip, for the service tests that check
// what an answer's archive holds.
#pragma once

#include <gtest/gtest.h>
#include <zip.h>

#include <map>
#include <string>

namespace mineru::service::testing {

// Entry name -> bytes; a failure to open the archive fails the test and gives no entries.
inline std::map<std::string, std::string> Unzip(const std::string& bytes) {
  std::map<std::string, std::string> out;
  zip_error_t error;
  zip_error_init(&error);
  zip_source_t* source = zip_source_buffer_create(bytes.data(), bytes.size(), 0, &error);
  zip_t* archive = source ? zip_open_from_source(source, ZIP_RDONLY, &error) : nullptr;
  EXPECT_NE(archive, nullptr) << zip_error_strerror(&error);
  if (!archive) return out;
  for (zip_int64_t i = 0; i < zip_get_num_entries(archive, 0); ++i) {
    zip_stat_t st;
    zip_stat_index(archive, static_cast<zip_uint64_t>(i), 0, &st);
    std::string data(st.size, '\0');
    zip_file_t* f = zip_fopen_index(archive, static_cast<zip_uint64_t>(i), 0);
    zip_fread(f, data.data(), st.size);
    zip_fclose(f);
    out[st.name] = data;
  }
  zip_discard(archive);
  zip_error_fini(&error);
  return out;
}

}  // namespace mineru::service::testing
