// cuBLASLt's int8 GEMM, the anchor of gpu_bench's int8_gemm rows: loaded with dlopen on the
// GPU machine (libcublasLt is 540 MB: it cannot travel with the bench, and the bench must
// build and dry-run where there is none). The few enum values it needs are cuBLAS's ABI;
// tests/cublaslt_abi_check.cpp compares them with the toolkit's headers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "bench/gpu/cuda_driver.h"

namespace npukit::bench {

class CublasLt {
 public:
  // Loads libcublasLt (the newest soname found), creates a handle in `cuda`'s context and
  // takes its workspace from `cuda`. Throws std::runtime_error naming what failed.
  explicit CublasLt(CudaDriver& cuda);
  ~CublasLt();
  CublasLt(const CublasLt&) = delete;
  CublasLt& operator=(const CublasLt&) = delete;

  std::string version() const;

  // y[M, N] (int32, row-major) = a[M, K] · w[N, K]ᵀ (int8, row-major) on device pointers, on
  // the null stream, asynchronously: npukit's int8_gemm with out=int32 and no zero point.
  void int8_gemm(const void* a, const void* w, void* y, int64_t m, int64_t n, int64_t k);

  // The enum values passed to the library (checked against cublasLt.h by a test).
  static constexpr int kComputeInt32 = 72;   // CUBLAS_COMPUTE_32I
  static constexpr int kRealInt8 = 3;        // CUDA_R_8I
  static constexpr int kRealInt32 = 10;      // CUDA_R_32I
  static constexpr int kDescTransA = 3;      // CUBLASLT_MATMUL_DESC_TRANSA
  static constexpr int kOpTranspose = 1;     // CUBLAS_OP_T

 private:
  template <class F>
  F sym(const char* name) const;
  void check(int status, const char* what) const;
  void plan(int64_t m, int64_t n, int64_t k);
  void release_plan();

  CudaDriver& cuda_;
  void* lib_ = nullptr;
  std::string soname_;
  void* handle_ = nullptr;
  void* workspace_ = nullptr;  // device memory, kWorkspace bytes
  static constexpr size_t kWorkspace = size_t(32) << 20;
  struct Plan {  // the descriptors of the last shape
    int64_t m = -1, n = -1, k = -1;
    void *desc = nullptr, *w = nullptr, *a = nullptr, *y = nullptr;
  } plan_;
};

}  // namespace npukit::bench
