# The .npy reader/writer test. Included from a top-level project that has already run
# find_package(GTest) and include(GoogleTest).
add_executable(npy_test
  ${CMAKE_CURRENT_LIST_DIR}/npy_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/../tools/npy.cpp)
target_compile_features(npy_test PRIVATE cxx_std_17)
target_include_directories(npy_test PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/..
  ${CMAKE_CURRENT_LIST_DIR}/../include)
target_link_libraries(npy_test PRIVATE GTest::gtest_main fmt::fmt)
gtest_discover_tests(npy_test ${NPUKIT_SANITIZED_GTEST_FILTER})
