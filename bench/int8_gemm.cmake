# INT8 GEMM against oneDNN (Debian libdnnl-dev), measured in the same process.
find_package(dnnl REQUIRED)
find_package(OpenMP REQUIRED)
npukit_bench(int8_gemm_bench int8_gemm_bench.cpp)
target_link_libraries(int8_gemm_bench PRIVATE DNNL::dnnl OpenMP::OpenMP_CXX)
if (NPUKIT_BUILD_TESTS)
  set_tests_properties(int8_gemm_bench_smoke PROPERTIES ENVIRONMENT NPUKIT_BENCH_SMOKE=1)
endif ()
