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
  gtest_discover_tests(${sim_test} ${NPUKIT_SANITIZED_GTEST_FILTER})
endforeach()
