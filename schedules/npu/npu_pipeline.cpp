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

std::vector<std::string> NpuPipeline::output_funcs() const {
  std::vector<std::string> names;
  for (const Output& o : outputs) names.push_back(o.func);
  return names;
}

void NpuPipeline::finish(const std::vector<Halide::Func>& outs, const std::vector<std::string>& tensors) {
  if (outs.size() != tensors.size()) throw std::logic_error(op + " NPU pipeline: outputs and tensor names differ in count");
  for (Halide::ImageParam& in : inputs) {
    for (int d = 0; d < in.dimensions(); ++d) in.dim(d).set_min(0);
  }
  std::vector<Halide::Func> funcs;
  for (size_t i = 0; i < outs.size(); ++i) {
    Halide::Func out = outs[i];
    for (int d = 0; d < out.dimensions(); ++d) out.output_buffer().dim(d).set_min(0);
    outputs.push_back(Output{out.name(), tensors[i], out.output_types()[0]});
    funcs.push_back(out);
  }
  pipeline = Halide::Pipeline(funcs);
}

}  // namespace npukit::schedules::npu
