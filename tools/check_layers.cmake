# SPDX-License-Identifier: Apache-2.0
# Fails if a file under src/<layer>/ includes a header of a higher layer (docs/DESIGN.md):
#   base < image < text < ops < model < engine < pipeline < jobs < service < devtools < apps
# devtools (developer tooling: the random checkpoint writer) sits just below apps, so that no
# runtime layer can include it.
# Run: cmake -DSOURCE_DIR=<repo> -P tools/check_layers.cmake
set(layers base image text ops model engine pipeline jobs service devtools apps)
file(GLOB_RECURSE sources "${SOURCE_DIR}/src/*.h" "${SOURCE_DIR}/src/*.cc")
set(violations "")
foreach(path IN LISTS sources)
  file(RELATIVE_PATH rel "${SOURCE_DIR}/src" "${path}")
  string(REGEX MATCH "^[^/]+" own "${rel}")
  list(FIND layers "${own}" own_rank)
  if(own_rank EQUAL -1)
    string(APPEND violations "\n  ${rel}: folder '${own}' is not a layer")
    continue()
  endif()
  file(STRINGS "${path}" includes REGEX "^#include \"[a-z_]+/")
  foreach(line IN LISTS includes)
    string(REGEX REPLACE "^#include \"([a-z_]+)/.*" "\\1" target "${line}")
    list(FIND layers "${target}" target_rank)
    if(target_rank GREATER own_rank)
      string(APPEND violations "\n  ${rel}: ${own} includes ${line} (layer ${target} is above)")
    endif()
  endforeach()
endforeach()
if(violations)
  message(FATAL_ERROR "layering violations:${violations}")
endif()
message(STATUS "layers OK")
