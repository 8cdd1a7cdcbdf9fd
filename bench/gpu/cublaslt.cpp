#include "bench/gpu/cublaslt.h"

#include <dlfcn.h>

#include <stdexcept>

namespace npukit::bench {
namespace {

// cublasLtMatmul's signature with the opaque types as void*; enums are ints in its ABI.
using MatmulFn = int (*)(void* handle, void* desc, const void* alpha, const void* a, void* a_layout, const void* b,
                         void* b_layout, const void* beta, const void* c, void* c_layout, void* d, void* d_layout,
                         const void* algo, void* workspace, size_t workspace_bytes, void* stream);

}  // namespace

template <class F>
F CublasLt::sym(const char* name) const {
  void* p = dlsym(lib_, name);
  if (!p) throw std::runtime_error(soname_ + " has no " + name);
  return reinterpret_cast<F>(p);
}

void CublasLt::check(int status, const char* what) const {
  if (status != 0) throw std::runtime_error(std::string(what) + " failed with cublasStatus_t " + std::to_string(status));
}

CublasLt::CublasLt(CudaDriver& cuda) : cuda_(cuda) {
  for (const char* name : {"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so.11", "libcublasLt.so"}) {
    if ((lib_ = dlopen(name, RTLD_NOW | RTLD_LOCAL)) != nullptr) {
      soname_ = name;
      break;
    }
  }
  if (!lib_) {
    throw std::runtime_error("cannot load libcublasLt (.so.13, .so.12, .so.11): put the CUDA toolkit's lib64 on LD_LIBRARY_PATH");
  }
  check(sym<int (*)(void**)>("cublasLtCreate")(&handle_), "cublasLtCreate");
  workspace_ = cuda_.alloc(kWorkspace);
}

CublasLt::~CublasLt() {
  release_plan();
  if (workspace_) cuda_.free(workspace_);
  if (handle_) sym<int (*)(void*)>("cublasLtDestroy")(handle_);
}

std::string CublasLt::version() const {
  return soname_ + " " + std::to_string(sym<size_t (*)()>("cublasLtGetVersion")());
}

void CublasLt::int8_gemm(const void* a, const void* w, void* y, int64_t m, int64_t n, int64_t k) {
  if (plan_.m != m || plan_.n != n || plan_.k != k) plan(m, n, k);
  const int32_t alpha = 1, beta = 0;
  check(sym<MatmulFn>("cublasLtMatmul")(handle_, plan_.desc, &alpha, w, plan_.w, a, plan_.a, &beta, y, plan_.y, y,
                                        plan_.y, nullptr, workspace_, kWorkspace, nullptr),
        "cublasLtMatmul (int8 x int8 -> int32, TN)");
}

// cuBLAS reads column-major: row-major y [M, N] is the N x M matrix op(W) A, where W is
// the K x N matrix row-major w is and A the K x M matrix a is, W transposed (the "TN" form
// its int8 kernels require). Built once per shape, so that timed calls only launch.
void CublasLt::plan(int64_t m, int64_t n, int64_t k) {
  release_plan();
  auto layout = sym<int (*)(void**, int, uint64_t, uint64_t, int64_t)>("cublasLtMatrixLayoutCreate");
  check(sym<int (*)(void**, int, int)>("cublasLtMatmulDescCreate")(&plan_.desc, kComputeInt32, kRealInt32),
        "cublasLtMatmulDescCreate");
  const int32_t transpose = kOpTranspose;
  check(sym<int (*)(void*, int, const void*, size_t)>("cublasLtMatmulDescSetAttribute")(plan_.desc, kDescTransA,
                                                                                        &transpose, sizeof transpose),
        "cublasLtMatmulDescSetAttribute(TRANSA)");
  check(layout(&plan_.w, kRealInt8, uint64_t(k), uint64_t(n), k), "cublasLtMatrixLayoutCreate(w)");
  check(layout(&plan_.a, kRealInt8, uint64_t(k), uint64_t(m), k), "cublasLtMatrixLayoutCreate(a)");
  check(layout(&plan_.y, kRealInt32, uint64_t(n), uint64_t(m), n), "cublasLtMatrixLayoutCreate(y)");
  plan_.m = m, plan_.n = n, plan_.k = k;
}

void CublasLt::release_plan() {
  auto destroy = sym<int (*)(void*)>("cublasLtMatrixLayoutDestroy");
  for (void* l : {plan_.w, plan_.a, plan_.y}) {
    if (l) destroy(l);
  }
  if (plan_.desc) sym<int (*)(void*)>("cublasLtMatmulDescDestroy")(plan_.desc);
  plan_ = Plan{};
}

}  // namespace npukit::bench
