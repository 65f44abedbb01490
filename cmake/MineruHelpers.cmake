# SPDX-License-Identifier: Apache-2.0
# mineru_add_test(NAME name SOURCES a.cc b.cc LIBS lib... [LABELS label...]
#                 [SUITE_LABELS "Suite=label,label"...] [FIXTURES fixture...] [RUN_SERIAL]
#                 [TIMEOUT seconds]): one GoogleTest binary, registered with CTest test by test,
# each test with the labels, fixtures and limits of mineru_test_properties below. Tests find
# committed fixtures through MINERU_TEST_DATA_DIR and built binaries through MINERU_BINARY_DIR.
function(mineru_add_test)
  cmake_parse_arguments(ARG "RUN_SERIAL" "NAME;TIMEOUT"
    "SOURCES;LIBS;LABELS;SUITE_LABELS;FIXTURES" ${ARGN})
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
  set(forward "")
  if(ARG_RUN_SERIAL)
    list(APPEND forward RUN_SERIAL)
  endif()
  if(ARG_TIMEOUT)
    list(APPEND forward TIMEOUT ${ARG_TIMEOUT})
  endif()
  mineru_test_properties(${ARG_NAME} LABELS ${ARG_LABELS} SUITE_LABELS ${ARG_SUITE_LABELS}
    FIXTURES ${ARG_FIXTURES} ${forward})
endfunction()

# mineru_test_properties(target [TEST_PREFIX prefix] [LABELS label...]
#                        [SUITE_LABELS "Suite=label,label"...] [FIXTURES fixture...]
#                        [RUN_SERIAL] [TIMEOUT seconds])
# Properties for every test that gtest_discover_tests(target) finds (call it after that).
# The tests exist only when CTest runs, and gtest_discover_tests' own PROPERTIES flattens list
# values (two labels, two fixtures), so this writes a script that CTest includes after the
# discovery script and that sets them test by test (CMake documents <target>_TESTS for this use).
#
# Labels (docs/TESTING.md "Labels"): every test gets LABELS (default `unit`); a test whose suite
# ("Suite", after TEST_PREFIX and a parameterised test's "Instance/") or full name
# ("Suite.Case") a SUITE_LABELS entry names gets that entry's labels instead (the last matching
# entry wins). Each label set holds exactly one of `unit` and `integration`; `slow` and the
# broker labels (`rabbitmq`) come on top. FIXTURES: FIXTURES_REQUIRED; RUN_SERIAL and TIMEOUT as
# CTest's properties.
function(mineru_test_properties target)
  cmake_parse_arguments(ARG "RUN_SERIAL" "TEST_PREFIX;TIMEOUT" "LABELS;SUITE_LABELS;FIXTURES"
    ${ARGN})
  if(NOT ARG_LABELS)
    set(ARG_LABELS unit)
  endif()
  _mineru_check_labels(${target} "${ARG_LABELS}")
  string(REPLACE "." "\\." prefix_re "${ARG_TEST_PREFIX}")
  set(script "# mineru_test_properties(${target}), cmake/MineruHelpers.cmake\n")
  string(APPEND script "foreach(test IN LISTS ${target}_TESTS)\n")
  string(APPEND script "  set(labels \"${ARG_LABELS}\")\n")
  foreach(entry IN LISTS ARG_SUITE_LABELS)
    if(NOT entry MATCHES "^([A-Za-z0-9_]+(\\.[A-Za-z0-9_]+)?)=([a-z0-9_]+(,[a-z0-9_]+)*)$")
      message(FATAL_ERROR "${target}: SUITE_LABELS entry '${entry}' is not Suite[.Case]=label,...")
    endif()
    set(name "${CMAKE_MATCH_1}")
    string(REPLACE "," ";" labels "${CMAKE_MATCH_3}")
    _mineru_check_labels("${target} ${name}" "${labels}")
    string(REPLACE "." "\\." name_re "${name}")
    string(APPEND script
      "  if(test MATCHES [[^${prefix_re}([A-Za-z0-9_]+/)?${name_re}(\\.|/|$)]])\n"
      "    set(labels \"${labels}\")\n"
      "  endif()\n")
  endforeach()
  set(properties "LABELS \"\${labels}\"")
  if(ARG_FIXTURES)
    string(APPEND properties " FIXTURES_REQUIRED \"${ARG_FIXTURES}\"")
  endif()
  if(ARG_RUN_SERIAL)
    string(APPEND properties " RUN_SERIAL TRUE")
  endif()
  if(ARG_TIMEOUT)
    string(APPEND properties " TIMEOUT ${ARG_TIMEOUT}")
  endif()
  string(APPEND script "  set_tests_properties(\"\${test}\" PROPERTIES ${properties})\n")
  string(APPEND script "endforeach()\n")
  set(file "${CMAKE_CURRENT_BINARY_DIR}/${target}_properties.cmake")
  file(WRITE "${file}" "${script}")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES "${file}")
endfunction()

# Exactly one of unit and integration: `ctest -L unit` and `ctest -L integration` split the
# suite in two.
function(_mineru_check_labels what labels)
  set(kinds 0)
  foreach(label IN ITEMS unit integration)
    if(label IN_LIST labels)
      math(EXPR kinds "${kinds} + 1")
    endif()
  endforeach()
  if(NOT kinds EQUAL 1)
    message(FATAL_ERROR "${what}: labels '${labels}' need exactly one of unit and integration")
  endif()
endfunction()

# Highway kernels: compiled once per SIMD target and dispatched at run time. SSSE3/SSE4 are
# skipped (AVX2 and AVX-512 cover every x86-64 server of the last decade; the baseline target
# still covers the rest), which halves compile time.
function(mineru_highway_sources target)
  target_compile_definitions(${target} PRIVATE "HWY_DISABLED_TARGETS=(HWY_SSSE3|HWY_SSE4)")
endfunction()
