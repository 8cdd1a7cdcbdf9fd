# The operators the kit ships. runtime/operators.cmake declares each with one line,
# npukit_operator(<op>), followed by its kernels; every library and test list then finds the
# op's files by their names, so adding an op edits no other CMake list and no generic code.
# An op is at most these six files:
#
#   ops/<op>.h              its algorithm: the Funcs the schedules see, then (section
#                           NPUKIT_ALGORITHM_<op>) their definition and its Generators
#                           (npukit_halide_ops), required
#   schedules/cpu/<op>.cpp, schedules/gpu/<op>.cpp  CPU and GPU schedules (npukit_halide_ops)
#   schedules/npu/<op>.cpp  NPU schedule (npukit_npu_sim)
#   golden/<op>.h           its golden: the reference's interface, then its definition and the
#                           input classes' cases (section NPUKIT_GOLDEN_<op>, npukit_golden)
#                           and the gate's hooks (NPUKIT_GATE_HOOKS_<op>, npukit_gate), required
#   runtime/ops/<op>.cpp    its registry entry (npukit_core), required
#
# and its own tests when it has them (tests/<op>_test.cpp, tests/golden_<op>_test.cpp). Each
# section of a header goes into the library it belongs to (the golden into none a framework
# links) through a one-line unit the build writes (npukit_op_unit). A file of an existing op
# that appears later is found at the next build (the lookups are CONFIGURE_DEPENDS globs).
# The C++ side reads the same list from the generated header npukit/operator_list.h:
# NPUKIT_OPERATORS(X) expands X(<op>) for each, in this order, and the registry
# (`<op>_spec()`) and the gate (`<op>_gate_hooks()`) list their entries from it.

include(${CMAKE_CURRENT_LIST_DIR}/NpukitSections.cmake)

# npukit_operator(<op>): records the op and adds the sources of the libraries made before
# runtime/ (the Halide ops, golden); later directories read npukit_operators().
function(npukit_operator OP)
  set_property(GLOBAL APPEND PROPERTY NPUKIT_OPERATORS ${OP})
  # The files of the layout before the sections (no build compiles them any more).
  npukit_op_files(stale ops/${OP}.cpp ops/${OP}_generator.cpp golden/${OP}.cpp golden/${OP}_cases.cpp
                  tools/gate/hooks/${OP}.cpp)
  if (stale)
    list(TRANSFORM stale REPLACE "^${PROJECT_SOURCE_DIR}/" "")
    message(FATAL_ERROR "operator ${OP}: ${stale} would not be compiled: the algorithm and its Generators go in "
                        "ops/${OP}.h (section NPUKIT_ALGORITHM_${OP}), the golden, its cases and the gate's hooks in "
                        "golden/${OP}.h (NPUKIT_GOLDEN_${OP}, NPUKIT_GATE_HOOKS_${OP}); cmake/NpukitOperators.cmake")
  endif ()
  if (TARGET npukit_halide_ops)  # not in a tree with prebuilt kernels
    npukit_op_file(algorithm ${OP} ops/${OP}.h "its algorithm")
    npukit_op_unit(unit ops/${OP}.h NPUKIT_ALGORITHM_${OP})
    npukit_op_files(schedules schedules/cpu/${OP}.cpp schedules/gpu/${OP}.cpp)
    target_sources(npukit_halide_ops PRIVATE ${unit} ${schedules})
  endif ()
  npukit_op_file(golden ${OP} golden/${OP}.h "a golden (reference, cases and gate hooks)")
  npukit_op_unit(unit golden/${OP}.h NPUKIT_GOLDEN_${OP})
  target_sources(npukit_golden PRIVATE ${unit})
endfunction()

# npukit_op_unit(<var> <header> <section>): the unit that compiles <section> of the
# source-relative <header> (npukit_section_unit), written into the build tree; <var> is its path.
function(npukit_op_unit OUT HEADER SECTION)
  get_filename_component(dir ${HEADER} DIRECTORY)
  set(unit ${CMAKE_BINARY_DIR}/operator_units/${dir}/${SECTION}.cpp)
  npukit_section_unit(${unit} ${HEADER} ${SECTION})
  set(${OUT} ${unit} PARENT_SCOPE)
endfunction()

# npukit_add_kernel(<kernel> GENERATOR <generator> [TIERS <tier>...] [PARAMS <k=v>...]): the
# kernel's CPU tiers (npukit_add_cpu_kernel) and its GPU variants (npukit_add_gpu_kernel),
# from the same Generator and parameters.
function(npukit_add_kernel KERNEL)
  cmake_parse_arguments(ARG "" "GENERATOR" "TIERS;PARAMS" ${ARGN})
  set(tiers "")
  if (ARG_TIERS)
    set(tiers TIERS ${ARG_TIERS})
  endif ()
  npukit_add_cpu_kernel(${KERNEL} GENERATOR ${ARG_GENERATOR} ${tiers} PARAMS ${ARG_PARAMS})
  npukit_add_gpu_kernel(${KERNEL} GENERATOR ${ARG_GENERATOR} PARAMS ${ARG_PARAMS})
endfunction()

# npukit_operators(<var>): every declared op, in declaration order.
function(npukit_operators OUT)
  get_property(ops GLOBAL PROPERTY NPUKIT_OPERATORS)
  set(${OUT} ${ops} PARENT_SCOPE)
endfunction()

# npukit_operators_having(<var> <path>): the declared ops that have the source-relative file
# <path>, in which <op> stands for the op's name (e.g. schedules/npu/<op>.cpp).
function(npukit_operators_having OUT PATTERN)
  npukit_operators(ops)
  set(having "")
  foreach (op IN LISTS ops)
    string(REPLACE "<op>" ${op} rel ${PATTERN})
    npukit_op_files(hit ${rel})
    if (hit)
      list(APPEND having ${op})
    endif ()
  endforeach ()
  set(${OUT} ${having} PARENT_SCOPE)
endfunction()

# npukit_op_files(<var> <path>...): the absolute paths of those of the source-relative paths
# that exist. The build configures again when one of them appears or goes.
function(npukit_op_files OUT)
  set(found "")
  foreach (rel IN LISTS ARGN)
    file(GLOB hit CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/${rel})
    list(APPEND found ${hit})
  endforeach ()
  set(${OUT} ${found} PARENT_SCOPE)
endfunction()

# npukit_op_file(<var> <op> <path> <what>): the absolute path of a file every op must have;
# a missing one stops the configuration naming the op, the path and what it is for.
function(npukit_op_file OUT OP REL WHAT)
  if (NOT EXISTS ${PROJECT_SOURCE_DIR}/${REL})
    message(FATAL_ERROR "operator ${OP}: ${REL} is missing; every operator needs ${WHAT} (cmake/NpukitOperators.cmake)")
  endif ()
  set(${OUT} ${PROJECT_SOURCE_DIR}/${REL} PARENT_SCOPE)
endfunction()

# Writes <dir>/npukit/operator_list.h: NPUKIT_OPERATORS(X), one X(<op>) per declared op.
function(npukit_write_operator_list DIR)
  npukit_operators(ops)
  set(list "")
  foreach (op IN LISTS ops)
    string(APPEND list " X(${op})")
  endforeach ()
  file(CONFIGURE OUTPUT ${DIR}/npukit/operator_list.h CONTENT
"// Generated by cmake/NpukitOperators.cmake from runtime/operators.cmake: every operator.
#pragma once
#define NPUKIT_OPERATORS(X)${list}
" @ONLY)
endfunction()
