// Whether a GPU family can run here, checked before a GPU kernel is called: a missing
// driver or device becomes Errc::unsupported with a message saying what was not found,
// instead of a Halide runtime error deep inside the first kernel.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace npukit {

// Loads the CUDA driver (libcuda.so.1) and checks that it sees a device, once per
// process. Throws Errc::unsupported ("no CUDA device was found: ...") otherwise.
void require_cuda_device();

// Loads the OpenCL ICD loader (libOpenCL.so.1) and checks that it lists a platform with a
// device, once per process. PoCL, when installed, is loaded first with RTLD_DEEPBIND: in a
// process that also links libHalide (LLVM 14), PoCL's compiler (LLVM 15) would otherwise
// bind to the wrong LLVM and crash on a cold cache. Throws Errc::unsupported otherwise.
void require_opencl_device();

// Copies `bytes` of CUDA device memory to the host, synchronously, in the context npukit's
// kernels use: for the few tensor values a call reads on the host (attention's positions).
// An error names the op and the tensor.
void cuda_copy_to_host(void* dst, const void* device_src, size_t bytes, std::string_view op, std::string_view tensor);

// The check for a GPU family ("gpu-cuda", "gpu-opencl").
void require_gpu_device(const std::string& family);

}  // namespace npukit
