// Facts about the GPU targets that schedules choose by: small named predicates on the
// Target, so that one schedule source serves CUDA and OpenCL.
#pragma once

#include "Halide.h"

namespace npukit::schedules::gpu {

// Whether `t` compiles a pipeline for a GPU (CUDA or OpenCL); Generators pick the GPU
// schedule by it.
inline bool is_gpu(const Halide::Target& t) { return t.has_gpu_feature(); }

// Threads per block of the row-wise kernels: 256 is a multiple of every warp size, keeps
// eight blocks resident per SM on sm_80/sm_90, and is within PoCL's work-group limit.
inline int block_threads(const Halide::Target&) { return 256; }

}  // namespace npukit::schedules::gpu
