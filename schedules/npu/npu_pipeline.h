// An operator's NPU schedule as one Halide pipeline over symbolic shapes, plus its plan
// (buffers, matrix role) and the names the lowered IR uses for its inputs, outputs and
// scalar parameters. Shapes and tile sizes are parameters, so one compiled pipeline serves
// every shape (simulator/analysis/op_simulation's cache). Inputs and outputs carry the
// names of the op's tensors, so the npu-sim kernel and the analysis bind them by name.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "Halide.h"
#include "schedules/npu/npu_plan.h"

namespace npukit::schedules::npu {

struct NpuPipeline {
  // A pipeline output: the Func the nest stores into and the op tensor it fills.
  struct Output {
    std::string func, tensor;
    Halide::Type type;
  };

  std::string op;
  Halide::Pipeline pipeline;
  NpuPlan plan;
  std::vector<Halide::ImageParam> inputs;    // in argument order, named as op tensors or extra inputs
  std::vector<Halide::Param<int32_t>> ints;  // scalar int parameters (tile sizes, zero points)
  std::vector<Halide::Param<float>> floats;  // scalar float parameters (eps)
  std::vector<Output> outputs;

  // The scalar int parameter called `name` (an internal error if the schedule has none).
  const Halide::Param<int32_t>& int_param(const std::string& name) const;
  // The pipeline's arguments, in the order realize/compile expect.
  std::vector<Halide::Argument> arguments() const;
  // The Func names of the outputs, for the analysis.
  std::vector<std::string> output_funcs() const;
  // Makes `outs` the pipeline's outputs, filling the op tensors of the same position in
  // `tensors`: every input and output dimension starts at 0 (the tensors are dense arrays).
  void finish(const std::vector<Halide::Func>& outs, const std::vector<std::string>& tensors);
};

}  // namespace npukit::schedules::npu
