// A non-owning view of a host tensor, as it arrives from DLPack, .npy files or the gate.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "npukit/dtype.h"
#include "runtime/dims.h"
#include "runtime/name_less.h"

namespace npukit {

struct TensorView {
  // Where `data` points: host memory, CUDA device memory (a kDLCUDA DLPack tensor, which
  // only target gpu-cuda takes, and only for ops that read no tensor data on the host; or
  // npukit's own, runtime/gpu_memory.h), or an OpenCL buffer (`data` is its cl_mem; npukit's
  // own only).
  enum class Memory { host, cuda, opencl };
  void* data = nullptr;
  DType dtype = DType::float32;
  Dims shape;    // outermost first, as numpy and DLPack order it
  Dims strides;  // in elements; empty means C-contiguous
  Memory memory = Memory::host;  // last, so that {data, dtype, shape, strides} still reads

  int64_t numel() const {
    int64_t n = 1;
    for (int64_t s : shape) n *= s;
    return n;
  }
  bool contiguous() const;
};

// Element i of the outermost dimension as a view of extent 1 there (x[i : i + 1]), on the
// same memory and strides: x itself where that extent is 1 already, else a host or CUDA
// tensor (addresses that take an offset).
TensorView outer_slice(const TensorView& x, int64_t i);

// Tensors by name.
using TensorMap = std::map<std::string, TensorView, NameLess>;

std::string shape_string(const int64_t* shape, size_t rank);  // "[128, 4096]"
inline std::string shape_string(const Dims& shape) { return shape_string(shape.data(), shape.size()); }
inline std::string shape_string(const std::vector<int64_t>& shape) { return shape_string(shape.data(), shape.size()); }

}  // namespace npukit
