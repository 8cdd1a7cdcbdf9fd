#include "runtime/gpu_device.h"

#include <dlfcn.h>

#include <cstdint>
#include <mutex>

#include "HalideRuntimeCuda.h"
#include "runtime/error.h"

namespace npukit {
namespace {

// The outcome of a once-per-process probe: empty when the device is there.
struct Probe {
  std::once_flag once;
  std::string missing;
};

std::string dl_error() {
  const char* e = dlerror();
  return e ? e : "unknown dlopen error";
}

// The context every npukit CUDA kernel runs in: the device's primary context, the one the
// CUDA runtime API and frameworks (PyTorch) use, so that a kDLCUDA tensor they allocated
// is valid in our kernels. Halide's default would create a context of its own.
void* cuda_context = nullptr;
void* cuda_library = nullptr;  // libcuda.so.1, once probe_cuda has loaded it

extern "C" int npukit_cuda_acquire_context(void*, void** ctx, bool) {
  *ctx = cuda_context;
  return 0;
}

extern "C" int npukit_cuda_release_context(void*) { return 0; }

std::string probe_cuda() {
  // RTLD_GLOBAL: Halide's CUDA runtime looks its entry points up in the process first.
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
  if (!lib) return "the CUDA driver library could not be loaded (" + dl_error() + ")";
  cuda_library = lib;
  using InitFn = int (*)(unsigned);
  using CountFn = int (*)(int*);
  auto init = reinterpret_cast<InitFn>(dlsym(lib, "cuInit"));
  auto count = reinterpret_cast<CountFn>(dlsym(lib, "cuDeviceGetCount"));
  if (!init || !count) return "libcuda.so.1 lacks cuInit/cuDeviceGetCount";
  if (const int rc = init(0); rc != 0) return fmt::format("cuInit failed with CUresult {}", rc);
  int n = 0;
  if (const int rc = count(&n); rc != 0) return fmt::format("cuDeviceGetCount failed with CUresult {}", rc);
  if (n == 0) return "the CUDA driver reports 0 devices";
  // The caller's current device when it has one, else device 0.
  using CurrentFn = int (*)(int*);
  using RetainFn = int (*)(void**, int);
  auto current = reinterpret_cast<CurrentFn>(dlsym(lib, "cuCtxGetDevice"));
  auto retain = reinterpret_cast<RetainFn>(dlsym(lib, "cuDevicePrimaryCtxRetain"));
  if (!current || !retain) return "libcuda.so.1 lacks cuCtxGetDevice/cuDevicePrimaryCtxRetain";
  int device = 0;
  if (current(&device) != 0) device = 0;
  if (const int rc = retain(&cuda_context, device); rc != 0) {
    return fmt::format("cuDevicePrimaryCtxRetain failed with CUresult {}", rc);
  }
  halide_set_cuda_acquire_context(npukit_cuda_acquire_context);
  halide_set_cuda_release_context(npukit_cuda_release_context);
  // Freed device memory goes to Halide's CUDA free list for the next call of the same size
  // (a GPU op run allocates its intermediates and the device side of host tensors): no
  // cuMemAlloc/cuMemFree, which synchronize the device, in a steady loop. Not measured here
  // (no GPU); the list holds what the largest calls used, as a framework's caching
  // allocator does.
  halide_reuse_device_allocations(nullptr, true);
  return "";
}

std::string probe_opencl() {
  // The ICD loader first, so that Halide's OpenCL runtime (which looks its entry points up
  // in the process first) finds the loader's cl* functions rather than PoCL's.
  void* lib = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_GLOBAL);
  if (!lib) return "the OpenCL ICD loader could not be loaded (" + dl_error() + ")";
  dlopen("libpocl.so.2", RTLD_NOW | RTLD_DEEPBIND | RTLD_GLOBAL);  // optional, see header
  using PlatformsFn = int (*)(unsigned, void**, unsigned*);
  using DevicesFn = int (*)(void*, unsigned long, unsigned, void**, unsigned*);
  auto platforms = reinterpret_cast<PlatformsFn>(dlsym(lib, "clGetPlatformIDs"));
  auto devices = reinterpret_cast<DevicesFn>(dlsym(lib, "clGetDeviceIDs"));
  if (!platforms || !devices) return "libOpenCL.so.1 lacks clGetPlatformIDs/clGetDeviceIDs";
  void* ids[16];
  unsigned n = 0;
  if (platforms(16, ids, &n) != 0 || n == 0) return "no OpenCL platform is installed (e.g. Debian's pocl-opencl-icd)";
  const unsigned long all_types = 0xFFFFFFFF;  // CL_DEVICE_TYPE_ALL
  for (unsigned i = 0; i < n && i < 16; ++i) {
    unsigned d = 0;
    if (devices(ids[i], all_types, 0, nullptr, &d) == 0 && d > 0) return "";
  }
  return "the OpenCL platforms list no device";
}

void require(Probe& p, std::string (*probe)(), const std::string& what) {
  std::call_once(p.once, [&] { p.missing = probe(); });
  if (!p.missing.empty()) fail(Errc::unsupported, "no {} device was found: {}", what, p.missing);
}

}  // namespace

void require_cuda_device() {
  static Probe p;
  require(p, probe_cuda, "CUDA");
}

void require_opencl_device() {
  static Probe p;
  require(p, probe_opencl, "OpenCL");
}

void cuda_copy_to_host(void* dst, const void* device_src, size_t bytes, std::string_view op, std::string_view tensor) {
  auto what = [&] { return std::string(op) + ": copying CUDA tensor " + std::string(tensor) + " to the host"; };
  require_cuda_device();
  using PushFn = int (*)(void*);
  using PopFn = int (*)(void**);
  using CopyFn = int (*)(void*, uint64_t, size_t);
  auto push = reinterpret_cast<PushFn>(dlsym(cuda_library, "cuCtxPushCurrent_v2"));
  auto pop = reinterpret_cast<PopFn>(dlsym(cuda_library, "cuCtxPopCurrent_v2"));
  auto copy = reinterpret_cast<CopyFn>(dlsym(cuda_library, "cuMemcpyDtoH_v2"));
  if (!push || !pop || !copy) fail(Errc::unsupported, "libcuda.so.1 lacks cuCtxPushCurrent/cuCtxPopCurrent/cuMemcpyDtoH");
  // In npukit's context (the device's primary one), whatever the calling thread has current.
  if (const int rc = push(cuda_context); rc != 0) {
    fail(Errc::kernel_failed, "{}: cuCtxPushCurrent failed with CUresult {}", what(), rc);
  }
  const int rc = copy(dst, reinterpret_cast<uint64_t>(device_src), bytes);
  void* popped = nullptr;
  pop(&popped);
  if (rc != 0) fail(Errc::kernel_failed, "{}: cuMemcpyDtoH failed with CUresult {}", what(), rc);
}

void require_gpu_device(const std::string& family) {
  if (family == "gpu-cuda") return require_cuda_device();
  if (family == "gpu-opencl") return require_opencl_device();
  fail(Errc::internal, "require_gpu_device: unknown GPU family '{}'", family);
}

}  // namespace npukit
