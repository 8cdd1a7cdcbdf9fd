# npukit_halide_library(<lib> GENERATOR <g> TARGETS <t> [PARAMS <k=v>...] [USE_RUNTIME <rt>]
#                       [FROM <generator executable>])
# One ahead-of-time kernel library `<lib>` (C function of the same name, user_context), and
# with no USE_RUNTIME its Halide runtime `<lib>.runtime`: generated here by FROM (default
# npukit_generators),
# or, when NPUKIT_PREBUILT_KERNELS names another build tree of this project, imported from
# that tree. The sanitizer tree (docs/reliability.md) imports them: Halide-generated code
# cannot be instrumented, and generating it again would double the build for nothing.

set(NPUKIT_PREBUILT_KERNELS "" CACHE PATH
    "a build tree of this project whose kernel libraries this tree links instead of generating them")

function(npukit_halide_library LIB)
  cmake_parse_arguments(ARG "" "GENERATOR;USE_RUNTIME;FROM" "TARGETS;PARAMS" ${ARGN})
  if (NOT ARG_FROM)
    set(ARG_FROM npukit_generators)
  endif ()
  if (NOT NPUKIT_PREBUILT_KERNELS)
    set(use_runtime "")
    if (ARG_USE_RUNTIME)
      set(use_runtime USE_RUNTIME ${ARG_USE_RUNTIME})
    endif ()
    add_halide_library(${LIB} FROM ${ARG_FROM} GENERATOR ${ARG_GENERATOR} FUNCTION_NAME ${LIB}
                       TARGETS ${ARG_TARGETS} FEATURES user_context PARAMS ${ARG_PARAMS} ${use_runtime})
    return ()
  endif ()
  # The same directory in the other tree: add_halide_library writes into the binary
  # directory of the CMakeLists.txt that declares the kernel.
  file(RELATIVE_PATH rel ${CMAKE_BINARY_DIR} ${CMAKE_CURRENT_BINARY_DIR})
  set(dir ${NPUKIT_PREBUILT_KERNELS}/${rel})
  set(runtime ${ARG_USE_RUNTIME})
  if (NOT runtime)
    set(runtime ${LIB}.runtime)
    _npukit_import_static(${runtime} ${dir}/lib${runtime}.a)
    target_link_libraries(${runtime} INTERFACE Halide::Runtime Threads::Threads ${CMAKE_DL_LIBS})
  endif ()
  _npukit_import_static(${LIB} ${dir}/lib${LIB}.a)
  target_include_directories(${LIB} INTERFACE ${dir})
  target_link_libraries(${LIB} INTERFACE ${runtime})
endfunction()

function(_npukit_import_static TARGET PATH)
  if (NOT EXISTS ${PATH})
    message(FATAL_ERROR "NPUKIT_PREBUILT_KERNELS: ${PATH} is missing: build ${NPUKIT_PREBUILT_KERNELS} first")
  endif ()
  add_library(${TARGET} STATIC IMPORTED GLOBAL)
  set_target_properties(${TARGET} PROPERTIES IMPORTED_LOCATION ${PATH})
endfunction()
