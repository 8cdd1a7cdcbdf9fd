// The few CUDA driver API entry points the GPU bench needs, loaded with dlopen so that the
// bench builds and dry-runs on machines without CUDA, and links no CUDA library.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace npukit::bench {

class CudaDriver {
 public:
  // Loads libcuda.so.1, initializes it and makes device 0's primary context current (the
  // one npukit's kernels use, runtime/gpu_device.cpp). Throws std::runtime_error naming
  // the failing call.
  CudaDriver();

  std::string device_name() const;
  void* alloc(size_t bytes);
  void free(void* p);
  void upload(void* dst, const void* src, size_t bytes);
  void download(void* dst, const void* src, size_t bytes);
  void copy(void* dst, const void* src, size_t bytes);  // device to device
  // Milliseconds that `n` calls of `fn` take on the device (null-stream events around them).
  template <class Fn>
  double time_ms(int n, Fn&& fn) {
    record(start_);
    for (int i = 0; i < n; ++i) fn();
    record(stop_);
    return elapsed(start_, stop_);
  }

 private:
  void check(int rc, const char* what) const;
  void record(void* event);
  double elapsed(void* a, void* b);
  template <class F>
  F sym(const char* name);

  void* lib_ = nullptr;
  int device_ = 0;
  void* start_ = nullptr;
  void* stop_ = nullptr;
};

}  // namespace npukit::bench
