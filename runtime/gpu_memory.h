// Device memory npukit owns on a GPU target: what one kernel writes and the next reads in
// the same op run (INT8 GEMM's int32 accumulator), and a prepared op's packed constants
// once uploaded. Each is a TensorView in the family's device memory, which call_kernel
// hands to GPU kernels as it is: no copy either way.
#pragma once

#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/scratch_arena.h"
#include "runtime/tensor.h"

namespace npukit {

struct Call;
class HalideBuffer;

// One device allocation of `family` ("gpu-cuda", "gpu-opencl"), freed with the object.
class GpuTensor {
 public:
  // Uninitialised, `dtype` × `shape`.
  GpuTensor(const std::string& family, DType dtype, const Dims& shape);
  // A device copy of the contiguous host tensor `host`.
  GpuTensor(const std::string& family, const TensorView& host);
  ~GpuTensor();
  GpuTensor(const GpuTensor&) = delete;
  GpuTensor& operator=(const GpuTensor&) = delete;

  const TensorView& view() const { return view_; }
  // Copies `src` (same dtype and shape, in the family's device memory) into this one.
  void copy_from_device(const TensorView& src);
  // Copies this one into host memory `dst` (numel × dtype size bytes), synchronously.
  void copy_to_host(void* dst) const;

 private:
  std::string family_;
  std::unique_ptr<HalideBuffer> buffer_;  // no host side; the device allocation
  TensorView view_;
};

// The intermediates of one GPU op run, freed when it ends.
class GpuScratch {
 public:
  explicit GpuScratch(std::string family) : family_(std::move(family)) {}
  const TensorView& take(DType dtype, const Dims& shape) { return tensors_.emplace_back(family_, dtype, shape).view(); }
  // A device copy of `t` (host memory, or the family's device memory): for a kernel that
  // must not read what it writes.
  const TensorView& copy_of(const TensorView& t);

 private:
  std::string family_;
  std::deque<GpuTensor> tensors_;  // a deque: the views handed out stay where they are
};

// A run's intermediates where its kernels read them: the frame's host memory on the CPU,
// device scratch on a GPU target (one kernel writes them, the next reads them, none comes
// back to the host).
class RunScratch {
 public:
  RunScratch(const Call& call, ScratchFrame& frame);
  TensorView take(DType dtype, const Dims& shape);
  // `t` where the kernels read it, for a kernel that must not read what it writes: itself
  // on the CPU, a device copy on a GPU (of host memory or the family's device memory). With
  // broadcast(), a small host row that a view with zero strides repeats is moved once,
  // where a host view with zero strides would be copied once per repeat (Halide's device
  // copies iterate zero-stride dimensions).
  TensorView copy_of(const TensorView& t);
  // `t` repeated along new outer dimensions of `outer` extents (zero strides); `t` must be
  // contiguous.
  static TensorView broadcast(TensorView t, const Dims& outer);
  // float32 zeros of shape [rows, row], stored as one row that every row repeats.
  TensorView zero_rows(int64_t rows, int64_t row);

 private:
  ScratchFrame& frame_;
  std::optional<GpuScratch> device_;
};

// The device copies of one prepared op's packed constant, made at its first GPU run and
// kept as long as the constant: a framework's steady state moves no weights. Keyed by the
// host memory they copy (a packed constant may have several parts: bytes, row sums).
class GpuConstantCopies {
 public:
  explicit GpuConstantCopies(std::string family) : family_(std::move(family)) {}
  // The device copy of `host` (uploaded on first use; safe from concurrent runs).
  const TensorView& of(const TensorView& host);
  size_t uploads() const;  // how many parts have been uploaded so far

 private:
  std::string family_;
  mutable std::mutex mutex_;
  std::vector<std::pair<const void*, std::unique_ptr<GpuTensor>>> copies_;
};

// `host`, a part of constant `name` of `call` (memory of the packed constant itself, which
// the copies are keyed by: never a copy of it, or each call would add one), where the GPU
// kernels read it: the prepared op's device copy when the call has one, else `host` itself
// (copied to the device for this call only).
const TensorView& gpu_resident(const Call& call, std::string_view name, const TensorView& host);

}  // namespace npukit
