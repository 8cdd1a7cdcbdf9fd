// Host runs of NPU schedules for `--target npu-sim:ARCH`: a pipeline realized on a call's
// tensors with its scalar parameters set by name (the registration's generic kernel in
// simulator/analysis/npu_sim_kernels.cpp). Halide errors come back as npukit errors.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "runtime/op_spec.h"
#include "schedules/npu/npu_pipeline.h"
#include "simulator/arch/arch_spec.h"

namespace npukit::schedules::npu {

// The arch of a call's target npu-sim:<arch>, or an invalid_argument error naming it.
sim::ArchSpec call_arch(const Call& call);

struct JitArgs {
  TensorMap inputs;  // by ImageParam name
  std::map<std::string, int64_t> ints;       // by Param name
  std::map<std::string, double> floats;      // by Param name
};

// Realizes `p` into its outputs. Every input, int and float param of the pipeline must be
// in `args` (a logic_error names the one that is not).
// The outputs are `outs` by tensor name (NpuPipeline::outputs), else the call's.
void jit_realize(NpuPipeline& p, const JitArgs& args, const Call& call,
                 const TensorMap& outs = {});

}  // namespace npukit::schedules::npu
