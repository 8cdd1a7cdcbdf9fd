// bench/gpu/cublaslt.h passes cuBLAS enum values as plain ints (the bench loads cuBLASLt
// with dlopen and includes no CUDA header): this compiles them against the toolkit's
// headers, so a renumbering fails the build of this check instead of a run on a GPU.
#include <cublasLt.h>

#include <cstdio>
#include <type_traits>

#include "bench/gpu/cublaslt.h"

using npukit::bench::CublasLt;

static_assert(CUBLAS_COMPUTE_32I == CublasLt::kComputeInt32);
static_assert(CUDA_R_8I == CublasLt::kRealInt8);
static_assert(CUDA_R_32I == CublasLt::kRealInt32);
static_assert(CUBLASLT_MATMUL_DESC_TRANSA == CublasLt::kDescTransA);
static_assert(CUBLAS_OP_T == CublasLt::kOpTranspose);
// The enums travel as int, the handle and descriptors as pointers: both as wide as the bench's.
static_assert(sizeof(cublasComputeType_t) == sizeof(int) && sizeof(cudaDataType_t) == sizeof(int));
static_assert(sizeof(cublasLtMatmulDescAttributes_t) == sizeof(int) && sizeof(cublasStatus_t) == sizeof(int));
static_assert(std::is_pointer_v<cublasLtHandle_t> && std::is_pointer_v<cublasLtMatmulDesc_t> &&
              std::is_pointer_v<cublasLtMatrixLayout_t> && std::is_pointer_v<cudaStream_t>);

int main() {
  std::puts("cublaslt_abi_check: the bench's cuBLAS constants match the toolkit's headers");
  return 0;
}
