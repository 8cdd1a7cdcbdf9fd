# golden_test: the golden library's own checks. Included from tests/CMakeLists.txt after
# golden/ has been added; paths are relative to this file so any top level can include it.

if(NOT TARGET GTest::gtest_main)
  find_package(GTest REQUIRED)
endif()
include(GoogleTest)

add_executable(golden_test
  ${CMAKE_CURRENT_LIST_DIR}/golden_add_rms_norm_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/golden_attention_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/golden_case_builder_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/golden_half_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/golden_int8_gemm_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/golden_metrics_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/golden_per_token_quant_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/golden_per_token_quant_cases_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/golden_rms_norm_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/golden_rope_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/golden_silu_mul_test.cpp
)
target_link_libraries(golden_test PRIVATE npukit_golden GTest::gtest_main)
if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
  target_compile_options(golden_test PRIVATE -Wall -Wextra)
endif()
# Its case checks walk every case's arrays in the test's own code: -O0 (tests/CMakeLists.txt)
# doubled their run time, -O1 keeps most of the compile saving.
if (NOT NPUKIT_SANITIZE)
  target_compile_options(golden_test PRIVATE -O1)
endif ()
gtest_discover_tests(golden_test ${NPUKIT_SANITIZED_GTEST_FILTER})
