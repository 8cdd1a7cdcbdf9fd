#include "bench/gpu/cuda_driver.h"

#include <dlfcn.h>

#include <stdexcept>

namespace npukit::bench {

template <class F>
F CudaDriver::sym(const char* name) {
  void* p = dlsym(lib_, name);
  if (!p) throw std::runtime_error(std::string("libcuda.so.1 has no ") + name);
  return reinterpret_cast<F>(p);
}

void CudaDriver::check(int rc, const char* what) const {
  if (rc != 0) throw std::runtime_error(std::string(what) + " failed with CUresult " + std::to_string(rc));
}

CudaDriver::CudaDriver() {
  lib_ = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
  if (!lib_) throw std::runtime_error(std::string("cannot load libcuda.so.1: ") + dlerror());
  check(sym<int (*)(unsigned)>("cuInit")(0), "cuInit");
  check(sym<int (*)(int*, int)>("cuDeviceGet")(&device_, 0), "cuDeviceGet");
  void* ctx = nullptr;
  check(sym<int (*)(void**, int)>("cuDevicePrimaryCtxRetain")(&ctx, device_), "cuDevicePrimaryCtxRetain");
  check(sym<int (*)(void*)>("cuCtxSetCurrent")(ctx), "cuCtxSetCurrent");
  auto create = sym<int (*)(void**, unsigned)>("cuEventCreate");
  check(create(&start_, 0), "cuEventCreate");
  check(create(&stop_, 0), "cuEventCreate");
}

std::string CudaDriver::device_name() const {
  char name[256] = {};
  auto get = reinterpret_cast<int (*)(char*, int, int)>(dlsym(lib_, "cuDeviceGetName"));
  if (get) check(get(name, sizeof name - 1, device_), "cuDeviceGetName");
  return name;
}

void* CudaDriver::alloc(size_t bytes) {
  uint64_t p = 0;
  check(sym<int (*)(uint64_t*, size_t)>("cuMemAlloc_v2")(&p, bytes), "cuMemAlloc");
  return reinterpret_cast<void*>(p);
}

void CudaDriver::free(void* p) { sym<int (*)(uint64_t)>("cuMemFree_v2")(reinterpret_cast<uint64_t>(p)); }

void CudaDriver::upload(void* dst, const void* src, size_t bytes) {
  check(sym<int (*)(uint64_t, const void*, size_t)>("cuMemcpyHtoD_v2")(reinterpret_cast<uint64_t>(dst), src, bytes),
        "cuMemcpyHtoD");
}

void CudaDriver::download(void* dst, const void* src, size_t bytes) {
  check(sym<int (*)(void*, uint64_t, size_t)>("cuMemcpyDtoH_v2")(dst, reinterpret_cast<uint64_t>(src), bytes),
        "cuMemcpyDtoH");
}

void CudaDriver::copy(void* dst, const void* src, size_t bytes) {
  check(sym<int (*)(uint64_t, uint64_t, size_t)>("cuMemcpyDtoD_v2")(reinterpret_cast<uint64_t>(dst),
                                                                     reinterpret_cast<uint64_t>(src), bytes),
        "cuMemcpyDtoD");
}

void CudaDriver::record(void* event) { check(sym<int (*)(void*, void*)>("cuEventRecord")(event, nullptr), "cuEventRecord"); }

double CudaDriver::elapsed(void* a, void* b) {
  check(sym<int (*)(void*)>("cuEventSynchronize")(b), "cuEventSynchronize");
  float ms = 0;
  check(sym<int (*)(float*, void*, void*)>("cuEventElapsedTime")(&ms, a, b), "cuEventElapsedTime");
  return ms;
}

}  // namespace npukit::bench
