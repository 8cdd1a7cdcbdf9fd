# Operators of one's own, built against the installed kit: find_package(npukit COMPONENTS
# operator) includes this file (docs/authoring.md). An op is the same files as in the kit's
# tree (cmake/NpukitOperators.cmake: its algorithm, schedules, golden, registry entry), and
#
#   npukit_add_operator(<op>
#     ALGORITHM <file>...               the Halide algorithm and its Generator (ops/<op>.h)
#     [GENERATOR <file>...]             the Generator, where it has a file of its own
#     SCHEDULES cpu=<file> [npu=<file>]  one schedule per target
#     GOLDEN <file>...                  reference, cases and gate hooks (golden/<op>.h)
#     ENTRY <file>...                   the registry entry (runtime/ops/<op>.cpp)
#     [INCLUDE_DIRECTORIES <dir>...])   where its files include each other from (default: here)
#   npukit_add_operator_kernel(<op> <kernel> GENERATOR <name> [TIERS <tier>...] [PARAMS <k=v>...])
#
# A .cpp file is compiled as it is; a header, through its sections as in the kit's tree: an
# ALGORITHM header's NPUKIT_ALGORITHM_<op>, a GOLDEN header's NPUKIT_GOLDEN_<op> and
# NPUKIT_GATE_HOOKS_<op>, each in a one-line unit written here (`#define`, then the header).
#
# build, as the kit builds its own ops (the same tier table and AOT wiring, NpukitKernels.cmake):
#   npukit_op_<op>            libnpukit_op_<op>.so: the entry and one AOT kernel library per
#                             CPU tier, dispatched by npukit's cpuid code; its own Halide
#                             runtime, hidden. What npukit_load_plugin and --plugin load.
#   npukit_op_<op>_gate       libnpukit_op_<op>_gate.so: the golden code and gate hooks.
#   npukit_op_<op>_npu        libnpukit_op_<op>_npu.so (with npu=): the NPU schedule; links
#                             libHalide, which the op's own library must not.
#   npukit_op_<op>_generator  the Generator executable (build time only).
# Each exports one function (runtime/operator_plugin.h) and hides everything else.
# NPUKIT_OPERATOR_TIERS (a cache list) replaces the default tiers of kernels that name none:
# a quick build for one machine, e.g. -DNPUKIT_OPERATOR_TIERS=sse41.

include(${CMAKE_CURRENT_LIST_DIR}/NpukitKernels.cmake)
include(${CMAKE_CURRENT_LIST_DIR}/NpukitSections.cmake)

set(NPUKIT_OPERATOR_TIERS "" CACHE STRING
    "CPU tiers of the operator kernels that name none (default: avx512 avx2 sse41); e.g. sse41 for a quick build")
set(_NPUKIT_OPERATOR_DIR ${CMAKE_CURRENT_LIST_DIR})

# A list of files relative to the calling directory, each of which must exist.
function(_npukit_operator_files OUT OP WHAT)
  set(files "")
  foreach (f IN LISTS ARGN)
    get_filename_component(abs ${f} ABSOLUTE BASE_DIR ${CMAKE_CURRENT_SOURCE_DIR})
    if (NOT EXISTS ${abs})
      message(FATAL_ERROR "npukit_add_operator(${OP}): ${WHAT} ${f}: no such file (${abs})")
    endif ()
    list(APPEND files ${abs})
  endforeach ()
  set(${OUT} ${files} PARENT_SCOPE)
endfunction()

# The units that compile <file>...: a .cpp file itself; a header, one unit per section (the
# section defined, then the header: npukit_section_unit), written under <dir>.
function(_npukit_operator_units OUT DIR)
  cmake_parse_arguments(ARG "" "" "SECTIONS" ${ARGN})
  set(units "")
  foreach (f IN LISTS ARG_UNPARSED_ARGUMENTS)
    if (NOT f MATCHES "\\.(h|hh|hpp)$")
      list(APPEND units ${f})
      continue ()
    endif ()
    get_filename_component(stem ${f} NAME_WE)
    foreach (section IN LISTS ARG_SECTIONS)
      set(unit ${DIR}/${stem}_${section}.cpp)
      npukit_section_unit(${unit} ${f} ${section})
      list(APPEND units ${unit})
    endforeach ()
  endforeach ()
  set(${OUT} ${units} PARENT_SCOPE)
endfunction()

# The link options of every plug-in library: its dependencies resolved now, the static
# archives (the Halide runtime among them) hidden, and only the descriptor exported.
function(_npukit_operator_library TARGET FILE_NAME)
  set_target_properties(${TARGET} PROPERTIES OUTPUT_NAME ${FILE_NAME} PREFIX lib CXX_VISIBILITY_PRESET hidden
                        VISIBILITY_INLINES_HIDDEN ON)
  target_link_options(${TARGET} PRIVATE -Wl,--no-undefined -Wl,--exclude-libs,ALL
                      -Wl,--version-script=${_NPUKIT_OPERATOR_DIR}/npukit_operator_plugin.map)
  set_property(TARGET ${TARGET} APPEND PROPERTY LINK_DEPENDS ${_NPUKIT_OPERATOR_DIR}/npukit_operator_plugin.map)
  target_compile_features(${TARGET} PRIVATE cxx_std_17)
endfunction()

function(npukit_add_operator OP)
  cmake_parse_arguments(ARG "" "" "ALGORITHM;GENERATOR;SCHEDULES;GOLDEN;ENTRY;INCLUDE_DIRECTORIES" ${ARGN})
  if (ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "npukit_add_operator(${OP}): unexpected arguments ${ARG_UNPARSED_ARGUMENTS}")
  endif ()
  if (NOT OP MATCHES "^[a-z][a-z0-9_]*$")
    message(FATAL_ERROR "npukit_add_operator(${OP}): an op name is lower-case letters, digits and '_', starting with a letter")
  endif ()
  foreach (key ALGORITHM SCHEDULES GOLDEN ENTRY)
    if (NOT ARG_${key})
      message(FATAL_ERROR "npukit_add_operator(${OP}): ${key} is missing; an op needs its algorithm, schedules, golden and entry")
    endif ()
  endforeach ()
  set(cpu "")
  set(npu "")
  foreach (item IN LISTS ARG_SCHEDULES)
    if (item MATCHES "^(cpu|npu)=(.+)$")
      set(${CMAKE_MATCH_1} ${CMAKE_MATCH_2})
    else ()
      message(FATAL_ERROR "npukit_add_operator(${OP}): SCHEDULES ${item}: expected cpu=<file> or npu=<file> (an operator plug-in has no GPU kernels yet)")
    endif ()
  endforeach ()
  if (NOT cpu)
    message(FATAL_ERROR "npukit_add_operator(${OP}): SCHEDULES needs cpu=<file>: the CPU kernels are what the op runs")
  endif ()
  set(glue ${CMAKE_CURRENT_BINARY_DIR}/npukit_op_${OP})
  _npukit_operator_files(algorithm ${OP} ALGORITHM ${ARG_ALGORITHM})
  _npukit_operator_units(algorithm ${glue} ${algorithm} SECTIONS NPUKIT_ALGORITHM_${OP})
  _npukit_operator_files(generator ${OP} GENERATOR ${ARG_GENERATOR})
  _npukit_operator_files(cpu ${OP} "SCHEDULES cpu=" ${cpu})
  _npukit_operator_files(golden ${OP} GOLDEN ${ARG_GOLDEN})
  _npukit_operator_units(golden ${glue} ${golden} SECTIONS NPUKIT_GOLDEN_${OP} NPUKIT_GATE_HOOKS_${OP})
  _npukit_operator_files(entry ${OP} ENTRY ${ARG_ENTRY})
  set(includes ${ARG_INCLUDE_DIRECTORIES})
  if (NOT includes)
    set(includes ${CMAKE_CURRENT_SOURCE_DIR})
  endif ()

  # The algorithm with its Generator and CPU schedule, compiled once for the Generator
  # executable and the NPU companion (Halide.h makes each file a compile of seconds).
  add_library(npukit_op_${OP}_algorithm OBJECT ${algorithm} ${generator} ${cpu})
  set_target_properties(npukit_op_${OP}_algorithm PROPERTIES POSITION_INDEPENDENT_CODE ON)
  target_include_directories(npukit_op_${OP}_algorithm PRIVATE ${includes})
  target_link_libraries(npukit_op_${OP}_algorithm PRIVATE npukit::halide_helpers)
  # The Generator executable, run at build time per kernel and tier.
  add_halide_generator(npukit_op_${OP}_generator SOURCES $<TARGET_OBJECTS:npukit_op_${OP}_algorithm>
                       LINK_LIBRARIES npukit::halide_helpers)
  target_include_directories(npukit_op_${OP}_generator PRIVATE ${includes})
  # The op's AOT kernels (npukit_add_operator_kernel), and through them its Halide runtime.
  add_library(npukit_op_${OP}_kernels INTERFACE)

  set(gate_file "")
  set(npu_file "")
  if (npu)
    _npukit_operator_files(npu ${OP} "SCHEDULES npu=" ${npu})
    set(npu_file "\"libnpukit_op_${OP}_npu.so\"")
    file(CONFIGURE OUTPUT ${glue}/npu_plugin.cpp CONTENT
"// Generated by npukit_add_operator: the NPU companion's descriptor (schedules/npu/npu_plugin.h).
#include \"schedules/npu/npu_plugin.h\"
NPUKIT_DEFINE_OPERATOR_NPU_PLUGIN(@OP@)
" @ONLY)
    add_library(npukit_op_${OP}_npu SHARED $<TARGET_OBJECTS:npukit_op_${OP}_algorithm> ${npu} ${glue}/npu_plugin.cpp)
    target_include_directories(npukit_op_${OP}_npu PRIVATE ${includes})
    target_link_libraries(npukit_op_${OP}_npu PRIVATE npukit::npu_support npukit::halide_helpers)
    _npukit_operator_library(npukit_op_${OP}_npu npukit_op_${OP}_npu)
  else ()
    set(npu_file nullptr)
  endif ()

  file(CONFIGURE OUTPUT ${glue}/gate_plugin.cpp CONTENT
"// Generated by npukit_add_operator: the gate companion's descriptor (tools/gate/gate_plugin.h).
#include \"tools/gate/gate_plugin.h\"
NPUKIT_DEFINE_OPERATOR_GATE_PLUGIN(@OP@)
" @ONLY)
  add_library(npukit_op_${OP}_gate SHARED ${golden} ${glue}/gate_plugin.cpp)
  target_include_directories(npukit_op_${OP}_gate PRIVATE ${includes})
  target_link_libraries(npukit_op_${OP}_gate PRIVATE npukit::golden_support npukit::op_support)
  # As the kit's golden: references and generated inputs round exactly as written, with no
  # FMA contraction, on every host.
  target_compile_options(npukit_op_${OP}_gate PRIVATE -ffp-contract=off)
  _npukit_operator_library(npukit_op_${OP}_gate npukit_op_${OP}_gate)

  file(CONFIGURE OUTPUT ${glue}/plugin.cpp CONTENT
"// Generated by npukit_add_operator: the plug-in's descriptor (runtime/operator_plugin.h).
#include \"runtime/operator_plugin.h\"
NPUKIT_DEFINE_OPERATOR_PLUGIN(@OP@, \"libnpukit_op_@OP@_gate.so\", @npu_file@)
" @ONLY)
  add_library(npukit_op_${OP} SHARED ${entry} ${glue}/plugin.cpp)
  target_include_directories(npukit_op_${OP} PRIVATE ${includes})
  target_link_libraries(npukit_op_${OP} PRIVATE npukit::op_support npukit_op_${OP}_kernels)
  _npukit_operator_library(npukit_op_${OP} npukit_op_${OP})
  # The companions beside it, where the loader looks for them.
  add_dependencies(npukit_op_${OP} npukit_op_${OP}_gate)
  if (npu)
    add_dependencies(npukit_op_${OP} npukit_op_${OP}_npu)
  endif ()
endfunction()

function(npukit_add_operator_kernel OP KERNEL)
  cmake_parse_arguments(ARG "" "GENERATOR" "TIERS;PARAMS" ${ARGN})
  if (NOT TARGET npukit_op_${OP}_kernels)
    message(FATAL_ERROR "npukit_add_operator_kernel(${OP} ${KERNEL}): declare the op with npukit_add_operator(${OP} ...) first")
  endif ()
  if (NOT ARG_GENERATOR)
    message(FATAL_ERROR "npukit_add_operator_kernel(${OP} ${KERNEL}): GENERATOR <name> is missing (its HALIDE_REGISTER_GENERATOR name)")
  endif ()
  set(tiers ${ARG_TIERS})
  if (NOT tiers)
    set(tiers ${NPUKIT_OPERATOR_TIERS})
  endif ()
  if (tiers)
    set(tiers TIERS ${tiers})
  endif ()
  npukit_add_cpu_kernel(${KERNEL} FROM npukit_op_${OP}_generator INTO npukit_op_${OP}_kernels
                        GENERATOR ${ARG_GENERATOR} ${tiers} PARAMS ${ARG_PARAMS})
endfunction()
