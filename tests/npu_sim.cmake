# The NPU schedules' suites (npukit_npu_sim), which JIT-compile with libHalide. Included
# from tests/CMakeLists.txt after simulator/ has been added, in the normal tree only (not
# the sanitizer tree: libHalide's LLVM is not instrumented).
#   npu_analysis_test: the lowering pass over the shipped NPU schedules and the
#     validations that need them;
#   npu_walk_merge_test: the merged walk of the nest reports what the walk of every
#     iteration reports;
#   npu_bad_schedules_test: one deliberately bad NPU schedule per rule, each yielding
#     exactly its diagnostic;
#   npu_schedule_registry_test: every registered NPU schedule through its registration:
#     capacity-safe choosers on random shapes x presets, strict-clean defaults, the tuner
#     against the default;
#   npu_schedules_test: the rope and attention NPU schedules: strict-clean per preset, the
#     decode-attention bandwidth validation, the matrix-dtype rule on an int8-only unit;
#     int4_gemm's memory-only default and its int4 matrix variant (the rule's error without int4);
#   qkv_attention_npu_test: qkv_attention's composite NPU schedule: its stages, the
#     stage-only pipelines through the rules, the sums and the intermediates' traffic.
foreach(npu_test npu_analysis_test npu_walk_merge_test npu_bad_schedules_test npu_schedule_registry_test
                 npu_schedules_test qkv_attention_npu_test)
  add_executable(${npu_test} ${CMAKE_CURRENT_LIST_DIR}/${npu_test}.cpp)
  target_link_libraries(${npu_test} PRIVATE npukit_npu_sim GTest::gtest_main)
  gtest_discover_tests(${npu_test} DISCOVERY_TIMEOUT 60 PROPERTIES TIMEOUT 600)
endforeach()
# The declared operators that have an NPU schedule, for the registry test's completeness check.
npukit_operators_having(_npu_ops schedules/npu/<op>.cpp)
list(JOIN _npu_ops "," _npu_names)
target_compile_definitions(npu_schedule_registry_test PRIVATE NPUKIT_NPU_OPERATOR_NAMES="${_npu_names}")

# npukit decode's planner (tools/decode): the seeds' arithmetic through the stage
# simulations, the memory plan, the CPU fallback, the model configs (a few seconds).
if (TARGET npukit_decode)
  add_executable(decode_plan_test ${CMAKE_CURRENT_LIST_DIR}/decode_plan_test.cpp)
  target_link_libraries(decode_plan_test PRIVATE npukit_decode GTest::gtest_main)
  target_compile_definitions(decode_plan_test PRIVATE NPUKIT_TEST_DATA="${CMAKE_CURRENT_LIST_DIR}/data")
  gtest_discover_tests(decode_plan_test DISCOVERY_TIMEOUT 60 PROPERTIES TIMEOUT 600)
endif ()
