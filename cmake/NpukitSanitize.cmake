# NPUKIT_SANITIZE=ON: this tree builds the kit's own C++ (runtime, golden, layouts,
# simulator, gate, CLI arguments) and the sanitized subset of its tests with AddressSanitizer
# and UndefinedBehaviorSanitizer, every report fatal, plus the libFuzzer targets
# (tests/fuzz/). The kernels come from NPUKIT_PREBUILT_KERNELS, a normal build of this
# project: Halide's generated code cannot be instrumented, and its callers can
# (docs/reliability.md). Code that links libHalide (the generators, the npu-sim kernels,
# the JIT tests) is not built here.
option(NPUKIT_SANITIZE "build with -fsanitize=address,undefined and the fuzz targets (clang)" OFF)
if (NOT NPUKIT_SANITIZE)
  return ()
endif ()
if (NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  message(FATAL_ERROR "NPUKIT_SANITIZE needs clang (libFuzzer): configure with -DCMAKE_CXX_COMPILER=clang++-14 -DCMAKE_C_COMPILER=clang-14")
endif ()
if (NOT NPUKIT_PREBUILT_KERNELS)
  message(FATAL_ERROR "NPUKIT_SANITIZE needs -DNPUKIT_PREBUILT_KERNELS=<a built tree of this project>")
endif ()
set(NPUKIT_BUILD_BENCH OFF CACHE BOOL "" FORCE)

# -O1: a third of -O0's run time under ASan, and still every report; frame pointers and
# line tables for the reports' stacks (full -g adds a seventh to the compile time and
# nothing a report prints). fuzzer-no-link gives libFuzzer the coverage of the code under test;
# elsewhere it costs a counter per edge.
set(NPUKIT_SANITIZE_FLAGS -fsanitize=address,undefined -fno-sanitize-recover=all
    -fsanitize=fuzzer-no-link)
add_compile_options(-O1 -gline-tables-only -fno-omit-frame-pointer ${NPUKIT_SANITIZE_FLAGS})
add_link_options(-fsanitize=address,undefined)
