# The layers of libtfcrt (docs/architecture.md, "Layers"). Each layer is a
# folder of lib/ built twice from one compilation: an OBJECT library
# (<name>_objects: position-independent, hidden visibility) and a STATIC
# <name> over those objects that links the layers below it. Tools link the
# static layers they need (TfcImport only TfcFormats); libtfcrt.so is the
# union of every layer's objects and exports the C API alone.
# scripts/check-layers.py checks, in the README test command, that no layer
# links or includes one above it, from the graph this file records in
# ${CMAKE_BINARY_DIR}/layers.txt.

# The libraries the layers use, found once at the top so that every
# directory sees their imported targets: nlohmann-json (files), PCRE2 (the
# pre-tokenizers' regexes), utf8proc (Unicode properties and case mapping).
find_package(Threads REQUIRED)
find_package(nlohmann_json 3 REQUIRED)
find_package(PkgConfig REQUIRED)
pkg_check_modules(TFC_PCRE2 REQUIRED IMPORTED_TARGET GLOBAL libpcre2-8)
pkg_check_modules(TFC_UTF8PROC REQUIRED IMPORTED_TARGET GLOBAL libutf8proc)

# add_tfcrt_layer(name SOURCES src... [DEPENDS layer...]
#                 [LIBS lib...] [PRIVATE_LIBS lib...])
# DEPENDS: the layers below that this one uses; LIBS: other libraries its
# users link too (Threads); PRIVATE_LIBS: libraries only its sources use
# (PCRE2, nlohmann-json), still linked by the static library's users.
function(add_tfcrt_layer name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPENDS;LIBS;PRIVATE_LIBS" ${ARGN})
  add_library(${name}_objects OBJECT ${ARG_SOURCES})
  target_include_directories(${name}_objects
    PUBLIC ${PROJECT_SOURCE_DIR}/include
    PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
  set_target_properties(${name}_objects PROPERTIES
    POSITION_INDEPENDENT_CODE ON
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON)
  if(ARG_LIBS OR ARG_PRIVATE_LIBS)
    target_link_libraries(${name}_objects PRIVATE ${ARG_LIBS} ${ARG_PRIVATE_LIBS})
  endif()

  add_library(${name} STATIC $<TARGET_OBJECTS:${name}_objects>)
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR}/include)
  set_target_properties(${name} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  target_link_libraries(${name} PUBLIC ${ARG_DEPENDS} ${ARG_LIBS}
    PRIVATE ${ARG_PRIVATE_LIBS})

  set(sources)
  foreach(source ${ARG_SOURCES})
    list(APPEND sources ${CMAKE_CURRENT_SOURCE_DIR}/${source})
  endforeach()
  set_property(GLOBAL APPEND PROPERTY TFCRT_LAYERS ${name})
  set_property(GLOBAL APPEND PROPERTY TFCRT_SOURCES ${sources})
  set_property(GLOBAL APPEND PROPERTY TFCRT_PRIVATE_INCLUDES
    ${CMAKE_CURRENT_SOURCE_DIR})
  set_property(GLOBAL APPEND PROPERTY TFCRT_LIBS ${ARG_LIBS} ${ARG_PRIVATE_LIBS})
  record_tfc_layer(${name})
endfunction()

# record_tfc_layer(name): the target `name`, built from the current source
# folder, is a layer (add_tfcrt_layer calls it, and so does TfcImport, which
# sits on TfcFormats).
function(record_tfc_layer name)
  file(RELATIVE_PATH folder ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_SOURCE_DIR})
  set_property(GLOBAL APPEND PROPERTY TFCRT_LAYER_GRAPH
    "${name} ${folder} : $<JOIN:$<TARGET_PROPERTY:${name},LINK_LIBRARIES>, >")
endfunction()

# The graph for scripts/check-layers.py, written when the build system is
# generated: one line per layer, "name folder : every library the target
# links" (what CMake really links, whichever call added it; the script keeps
# the layers among them).
function(write_tfcrt_layer_graph)
  get_property(graph GLOBAL PROPERTY TFCRT_LAYER_GRAPH)
  string(JOIN "\n" text ${graph})
  file(GENERATE OUTPUT ${CMAKE_BINARY_DIR}/layers.txt CONTENT "${text}\n")
endfunction()
