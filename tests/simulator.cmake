# The simulator's rules, cost model and reports, tested on hand-written analyses
# (sim_test_fixtures.h). Included from tests/CMakeLists.txt after simulator/ has been
# added; paths are relative to this file so any top level can include it.

if(NOT TARGET GTest::gtest_main)
  find_package(GTest REQUIRED)
endif()
include(GoogleTest)
foreach(sim_test sim_rules_test cost_model_test sim_report_test)
  add_executable(${sim_test} ${CMAKE_CURRENT_LIST_DIR}/${sim_test}.cpp)
  target_link_libraries(${sim_test} PRIVATE npukit_simulator GTest::gtest_main)
  if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    target_compile_options(${sim_test} PRIVATE -Wall -Wextra)
  endif()
  gtest_discover_tests(${sim_test})
endforeach()

# The lowering pass over the shipped NPU schedules and the validations that need them.
add_executable(npu_analysis_test ${CMAKE_CURRENT_LIST_DIR}/npu_analysis_test.cpp)
target_link_libraries(npu_analysis_test PRIVATE npukit_npu_sim GTest::gtest_main)
gtest_discover_tests(npu_analysis_test DISCOVERY_TIMEOUT 60 PROPERTIES TIMEOUT 600)

# The merged walk of the nest reports what the walk of every iteration reports.
add_executable(npu_walk_merge_test ${CMAKE_CURRENT_LIST_DIR}/npu_walk_merge_test.cpp)
target_link_libraries(npu_walk_merge_test PRIVATE npukit_npu_sim GTest::gtest_main)
gtest_discover_tests(npu_walk_merge_test DISCOVERY_TIMEOUT 60 PROPERTIES TIMEOUT 600)

# One deliberately bad NPU schedule per rule, each yielding exactly its diagnostic.
add_executable(npu_bad_schedules_test ${CMAKE_CURRENT_LIST_DIR}/npu_bad_schedules_test.cpp)
target_link_libraries(npu_bad_schedules_test PRIVATE npukit_npu_sim GTest::gtest_main)
gtest_discover_tests(npu_bad_schedules_test DISCOVERY_TIMEOUT 60 PROPERTIES TIMEOUT 600)

# Every registered NPU schedule through its registration: capacity-safe choosers on random
# shapes x presets, strict-clean defaults, the tuner against the default.
add_executable(npu_schedule_registry_test ${CMAKE_CURRENT_LIST_DIR}/npu_schedule_registry_test.cpp)
target_link_libraries(npu_schedule_registry_test PRIVATE npukit_npu_sim GTest::gtest_main)
gtest_discover_tests(npu_schedule_registry_test DISCOVERY_TIMEOUT 60 PROPERTIES TIMEOUT 600)

# The rope and attention NPU schedules: strict-clean per preset, the decode-attention
# bandwidth validation, the matrix-dtype rule on an int8-only unit.
add_executable(npu_schedules_test ${CMAKE_CURRENT_LIST_DIR}/npu_schedules_test.cpp)
target_link_libraries(npu_schedules_test PRIVATE npukit_npu_sim GTest::gtest_main)
gtest_discover_tests(npu_schedules_test DISCOVERY_TIMEOUT 60 PROPERTIES TIMEOUT 600)

# qkv_attention's composite NPU schedule: its stages, the stage-only pipelines through the
# rules, the sums and the intermediates' traffic.
add_executable(qkv_attention_npu_test ${CMAKE_CURRENT_LIST_DIR}/qkv_attention_npu_test.cpp)
target_link_libraries(qkv_attention_npu_test PRIVATE npukit_npu_sim GTest::gtest_main)
gtest_discover_tests(qkv_attention_npu_test DISCOVERY_TIMEOUT 60 PROPERTIES TIMEOUT 600)
