# SPDX-License-Identifier: Apache-2.0
# MINERU_FUZZ: every target of the build is compiled with AddressSanitizer, UndefinedBehavior-
# Sanitizer (every finding fatal, so libFuzzer records it as a crash) and libFuzzer's coverage
# instrumentation; fuzz/ links its targets with -fsanitize=fuzzer, which adds libFuzzer's main.
# libFuzzer ships with clang's runtime libraries (Debian 12: libclang-rt-14-dev, which clang-14
# only recommends).
if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  message(FATAL_ERROR "MINERU_FUZZ needs clang (-DCMAKE_CXX_COMPILER=clang++), not "
    "${CMAKE_CXX_COMPILER_ID}")
endif()

include(CheckCXXSourceCompiles)
set(CMAKE_REQUIRED_FLAGS "-fsanitize=fuzzer,address,undefined")
set(CMAKE_REQUIRED_LINK_OPTIONS "-fsanitize=fuzzer,address,undefined")
check_cxx_source_compiles([[
#include <cstddef>
#include <cstdint>
extern "C" int LLVMFuzzerTestOneInput(const uint8_t*, size_t) { return 0; }
]] MINERU_HAVE_LIBFUZZER)
unset(CMAKE_REQUIRED_FLAGS)
unset(CMAKE_REQUIRED_LINK_OPTIONS)
if(NOT MINERU_HAVE_LIBFUZZER)
  message(FATAL_ERROR "clang cannot link -fsanitize=fuzzer,address,undefined: install "
    "libclang-rt-14-dev (scripts/setup-debian.sh does)")
endif()

add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=all
  -fno-omit-frame-pointer -fsanitize=fuzzer-no-link)
add_link_options(-fsanitize=address,undefined)
