# SPDX-License-Identifier: Apache-2.0
# mineru_add_test(NAME name SOURCES a.cc b.cc LIBS lib...): one GoogleTest binary, registered
# with CTest test by test. Tests find committed fixtures through MINERU_TEST_DATA_DIR and built
# binaries through MINERU_BINARY_DIR.
function(mineru_add_test)
  cmake_parse_arguments(ARG "" "NAME" "SOURCES;LIBS" ${ARGN})
  if(NOT MINERU_BUILD_TESTS)
    return()
  endif()
  add_executable(${ARG_NAME} ${ARG_SOURCES})
  target_link_libraries(${ARG_NAME} PRIVATE ${ARG_LIBS} GTest::gtest GTest::gtest_main)
  target_compile_definitions(${ARG_NAME} PRIVATE
    MINERU_TEST_DATA_DIR="${PROJECT_SOURCE_DIR}/tests/data"
    MINERU_BINARY_DIR="${PROJECT_BINARY_DIR}")
  gtest_discover_tests(${ARG_NAME} DISCOVERY_TIMEOUT 60
    PROPERTIES ENVIRONMENT "MINERU_THREADS=2")
endfunction()

# Highway kernels: compiled once per SIMD target and dispatched at run time. SSSE3/SSE4 are
# skipped (AVX2 and AVX-512 cover every x86-64 server of the last decade; the baseline target
# still covers the rest), which halves compile time.
function(mineru_highway_sources target)
  target_compile_definitions(${target} PRIVATE "HWY_DISABLED_TARGETS=(HWY_SSSE3|HWY_SSE4)")
endfunction()
