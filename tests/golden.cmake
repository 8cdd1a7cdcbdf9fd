# golden_test: the golden library's own checks. Included from tests/CMakeLists.txt after
# golden/ and runtime/ (which declares the operators) have been added.

if(NOT TARGET GTest::gtest_main)
  find_package(GTest REQUIRED)
endif()
include(GoogleTest)

# The golden library's own checks, then each operator's tests/golden_<op>_test.cpp, found by
# name from npukit_operator(<op>) (runtime/operators.cmake).
add_executable(golden_test
  ${CMAKE_CURRENT_LIST_DIR}/golden_case_builder_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/golden_half_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/golden_metrics_test.cpp
)
npukit_operators_having(_golden_tested tests/golden_<op>_test.cpp)
foreach (op IN LISTS _golden_tested)
  target_sources(golden_test PRIVATE ${CMAKE_CURRENT_LIST_DIR}/golden_${op}_test.cpp)
endforeach ()
target_link_libraries(golden_test PRIVATE npukit_golden GTest::gtest_main)
# gtest.h parsed once for all its files (one per operator and more).
target_precompile_headers(golden_test PRIVATE <gtest/gtest.h>)
if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
  target_compile_options(golden_test PRIVATE -Wall -Wextra)
endif()
# Its case checks walk every case's arrays in the test's own code: -O0 (tests/CMakeLists.txt)
# doubled their run time, -O1 keeps most of the compile saving.
if (NOT NPUKIT_SANITIZE)
  target_compile_options(golden_test PRIVATE -O1)
endif ()
gtest_discover_tests(golden_test ${NPUKIT_SANITIZED_GTEST_FILTER})
