# SPDX-License-Identifier: Apache-2.0
# The web UI embedded in mineru_service (included from src/service/CMakeLists.txt).
#
# With MINERU_WEB_UI=ON (the default) the build runs `npm ci` on web/package.json and the
# committed web/package-lock.json in <build>/web-vendor (again only when either file changes),
# then cmake/EmbedFiles.cmake turns web/src/* and the browser builds of marked, KaTeX (with its
# woff2 fonts) and DOMPurify into web_ui_assets.cc, compiled into mineru_service. Nothing is
# downloaded at run time and nothing generated is committed.
# With MINERU_WEB_UI=OFF no npm is needed: the table of assets is empty and `/` answers a short
# page saying the UI was not built.
#
# Served paths (service/web_ui.h): index.html at "/", web/src/<file> at "/ui/<file>", the
# libraries at "/ui/vendor/<file>" and KaTeX's fonts at "/ui/vendor/fonts/<file>" (katex.min.css
# names them relative to itself).
option(MINERU_WEB_UI
  "Embed the web UI with marked, KaTeX and DOMPurify installed by npm at build time" ON)

set(web_dir "${PROJECT_SOURCE_DIR}/web")
set(web_entries "${CMAKE_CURRENT_BINARY_DIR}/web_ui_entries.txt")
set(web_assets_cc "${CMAKE_CURRENT_BINARY_DIR}/web_ui_assets.cc")
set(web_manifest "${CMAKE_CURRENT_BINARY_DIR}/web_ui_manifest.tsv")
set(web_depends "")
set(entries "")

if(MINERU_WEB_UI)
  find_program(MINERU_NPM npm)
  if(NOT MINERU_NPM)
    message(FATAL_ERROR
      "The web UI needs npm at build time (marked, KaTeX and DOMPurify from "
      "web/package-lock.json): install Node.js and npm (scripts/setup-debian.sh does), or "
      "configure with -DMINERU_WEB_UI=OFF to build without the web UI.")
  endif()
  set(vendor_dir "${PROJECT_BINARY_DIR}/web-vendor")
  set(npm_stamp "${vendor_dir}/npm-ci.stamp")
  add_custom_command(OUTPUT "${npm_stamp}"
    COMMAND "${CMAKE_COMMAND}" -E make_directory "${vendor_dir}"
    COMMAND "${CMAKE_COMMAND}" -E copy "${web_dir}/package.json" "${web_dir}/package-lock.json"
            "${vendor_dir}"
    COMMAND "${MINERU_NPM}" ci --no-audit --no-fund --loglevel=error
    COMMAND "${CMAKE_COMMAND}" -E touch "${npm_stamp}"
    DEPENDS "${web_dir}/package.json" "${web_dir}/package-lock.json"
    WORKING_DIRECTORY "${vendor_dir}"
    COMMENT "Installing the web UI libraries (npm ci, web/package-lock.json)"
    VERBATIM)

  file(GLOB_RECURSE web_sources CONFIGURE_DEPENDS "${web_dir}/src/*")
  foreach(source IN LISTS web_sources)
    file(RELATIVE_PATH rel "${web_dir}/src" "${source}")
    if(rel STREQUAL "index.html")
      string(APPEND entries "index.html\t${source}\n")
    else()
      string(APPEND entries "ui/${rel}\t${source}\n")
    endif()
  endforeach()
  set(modules "${vendor_dir}/node_modules")
  string(APPEND entries
    "ui/vendor/marked.esm.js\t${modules}/marked/lib/marked.esm.js\n"
    "ui/vendor/katex.mjs\t${modules}/katex/dist/katex.mjs\n"
    "ui/vendor/katex.min.css\t${modules}/katex/dist/katex.min.css\n"
    "ui/vendor/fonts/\t${modules}/katex/dist/fonts/*.woff2\n"
    "ui/vendor/purify.es.mjs\t${modules}/dompurify/dist/purify.es.mjs\n")
  set(web_depends "${npm_stamp}" ${web_sources})
endif()

# Rewritten only when the list changes (file(CONFIGURE) keeps an identical file untouched).
file(CONFIGURE OUTPUT "${web_entries}" CONTENT "${entries}" @ONLY)
add_custom_command(OUTPUT "${web_assets_cc}" "${web_manifest}"
  COMMAND "${CMAKE_COMMAND}" "-DENTRIES=${web_entries}" "-DOUTPUT=${web_assets_cc}"
          "-DMANIFEST=${web_manifest}" -P "${PROJECT_SOURCE_DIR}/cmake/EmbedFiles.cmake"
  DEPENDS "${web_entries}" "${PROJECT_SOURCE_DIR}/cmake/EmbedFiles.cmake" ${web_depends}
  COMMENT "Embedding the web UI"
  VERBATIM)
target_sources(mineru_service PRIVATE "${web_assets_cc}")
# For tests/service/web_ui_test.cc.
set(MINERU_WEB_UI_MANIFEST "${web_manifest}" CACHE INTERNAL "served path -> source of each UI file")
