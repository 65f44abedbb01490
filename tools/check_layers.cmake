# SPDX-License-Identifier: Apache-2.0
# Fails if a file under src/ includes a header of a layer its own layer does not link
# (docs/DESIGN.md, "Layers"). The table below is the link graph: each layer names the layers its
# library links directly (target_link_libraries in its CMakeLists.txt); a file may include its
# own layer and every layer reachable through those edges, nothing else. image/pdf is a layer of
# its own (the mineru_pdf* libraries, linked apart from mineru_image). A folder of src/ that is
# not in the table fails too, so a new layer has to say where it stands. devtools (the random
# checkpoint writer) is linked by apps alone, so no runtime layer can include it.
# Run: cmake -DSOURCE_DIR=<repo> -P tools/check_layers.cmake
set(edges_base "")
set(edges_image base)
set(edges_image/pdf image base)
set(edges_text base)
set(edges_ops base)
set(edges_model ops base)
set(edges_engine model image text ops base)
set(edges_pipeline engine image/pdf image text base)
set(edges_cache pipeline base)
set(edges_tasks cache pipeline image base)
set(edges_celery tasks cache text image base)
set(edges_service tasks engine base)
set(edges_devtools model text base)
set(edges_apps devtools service celery tasks cache pipeline engine model text image image/pdf)
set(layers base image image/pdf text ops model engine pipeline cache tasks celery service devtools
    apps)

# allowed_<layer>: the transitive closure of edges_<layer>, plus the layer itself. Layers are
# listed above in an order where every edge points to an earlier one, so one pass suffices.
foreach(layer IN LISTS layers)
  set(allowed_${layer} ${layer})
  foreach(dep IN LISTS edges_${layer})
    list(FIND layers "${dep}" dep_rank)
    list(FIND layers "${layer}" own_rank)
    if(dep_rank EQUAL -1 OR NOT dep_rank LESS own_rank)
      message(FATAL_ERROR "check_layers: ${layer} links ${dep}, which is not an earlier layer")
    endif()
    list(APPEND allowed_${layer} ${allowed_${dep}})
  endforeach()
  list(REMOVE_DUPLICATES allowed_${layer})
endforeach()

# The layer of a path relative to src/ ("image/pdf/protocol.h" -> image/pdf).
function(layer_of rel out)
  if(rel MATCHES "^image/pdf/")
    set(${out} image/pdf PARENT_SCOPE)
  else()
    string(REGEX MATCH "^[^/]+" first "${rel}")
    set(${out} "${first}" PARENT_SCOPE)
  endif()
endfunction()

file(GLOB_RECURSE sources "${SOURCE_DIR}/src/*.h" "${SOURCE_DIR}/src/*.cc")
set(violations "")
foreach(path IN LISTS sources)
  file(RELATIVE_PATH rel "${SOURCE_DIR}/src" "${path}")
  layer_of("${rel}" own)
  list(FIND layers "${own}" own_rank)
  if(own_rank EQUAL -1)
    string(APPEND violations "\n  ${rel}: folder '${own}' is not a layer (add it to the table)")
    continue()
  endif()
  file(STRINGS "${path}" includes REGEX "^#include \"[a-z_]+/")
  foreach(line IN LISTS includes)
    string(REGEX REPLACE "^#include \"([^\"]+)\".*" "\\1" header "${line}")
    layer_of("${header}" target)
    list(FIND allowed_${own} "${target}" allowed)
    if(allowed EQUAL -1)
      string(APPEND violations
        "\n  ${rel}: ${own} includes ${line} (${own} does not link ${target})")
    endif()
  endforeach()
endforeach()
if(violations)
  message(FATAL_ERROR "layering violations:${violations}")
endif()
message(STATUS "layers OK")
