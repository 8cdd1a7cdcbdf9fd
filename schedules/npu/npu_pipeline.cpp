#include "schedules/npu/npu_pipeline.h"

#include <stdexcept>

namespace npukit::schedules::npu {

const Halide::Param<int32_t>& NpuPipeline::int_param(const std::string& name) const {
  for (const Halide::Param<int32_t>& p : ints) {
    if (p.name() == name) return p;
  }
  throw std::logic_error(op + " NPU pipeline: no int parameter '" + name + "'");
}

std::vector<Halide::Argument> NpuPipeline::arguments() const {
  std::vector<Halide::Argument> args;
  for (const Halide::ImageParam& p : inputs) args.push_back(p);
  for (const Halide::Param<int32_t>& p : ints) args.push_back(p);
  for (const Halide::Param<float>& p : floats) args.push_back(p);
  return args;
}

void NpuPipeline::finish(Halide::Func out) {
  for (Halide::ImageParam& in : inputs) {
    for (int d = 0; d < in.dimensions(); ++d) in.dim(d).set_min(0);
  }
  for (int d = 0; d < out.dimensions(); ++d) out.output_buffer().dim(d).set_min(0);
  output = out.name();
  output_type = out.output_types()[0];
  pipeline = Halide::Pipeline(out);
}

}  // namespace npukit::schedules::npu
