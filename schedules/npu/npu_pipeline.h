// An operator's NPU schedule as one Halide pipeline over symbolic shapes, plus its plan
// (buffers, matrix role) and the names the lowered IR uses for its inputs, outputs and
// scalar parameters. Shapes and tile sizes are parameters, so one compiled pipeline serves
// every shape (simulator/analysis/pipeline_cache).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "Halide.h"
#include "schedules/npu/npu_plan.h"

namespace npukit::schedules::npu {

struct NpuPipeline {
  std::string op;
  Halide::Pipeline pipeline;
  NpuPlan plan;
  std::vector<Halide::ImageParam> inputs;   // in argument order
  std::vector<Halide::Param<int32_t>> ints; // scalar int parameters (tile sizes, zero points)
  std::vector<Halide::Param<float>> floats; // scalar float parameters (eps)
  std::string output;                       // the output Func (and buffer) name
  Halide::Type output_type;

  // The scalar int parameter called `name` (an internal error if the schedule has none).
  const Halide::Param<int32_t>& int_param(const std::string& name) const;
  // The pipeline's arguments, in the order realize/compile expect.
  std::vector<Halide::Argument> arguments() const;
  // Makes `out` the pipeline's output: every input and output dimension starts at 0 (the
  // tensors are dense arrays), its name and type recorded.
  void finish(Halide::Func out);
};

}  // namespace npukit::schedules::npu
