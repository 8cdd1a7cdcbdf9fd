# arch_spec_test: the NPU architecture spec loader, validator and presets. Included from
# tests/CMakeLists.txt after simulator/ has been added; paths are relative to this file so
# any top level can include it.

if(NOT TARGET GTest::gtest_main)
  find_package(GTest REQUIRED)
endif()
include(GoogleTest)

add_executable(arch_spec_test ${CMAKE_CURRENT_LIST_DIR}/arch_spec_test.cpp)
target_link_libraries(arch_spec_test PRIVATE npukit_simulator GTest::gtest_main)
if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
  target_compile_options(arch_spec_test PRIVATE -Wall -Wextra)
endif()
gtest_discover_tests(arch_spec_test ${NPUKIT_SANITIZED_GTEST_FILTER})

add_executable(compute_cycles_test ${CMAKE_CURRENT_LIST_DIR}/compute_cycles_test.cpp)
target_link_libraries(compute_cycles_test PRIVATE npukit_simulator GTest::gtest_main)
gtest_discover_tests(compute_cycles_test ${NPUKIT_SANITIZED_GTEST_FILTER})
