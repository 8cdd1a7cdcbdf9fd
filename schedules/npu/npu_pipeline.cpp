#include "schedules/npu/npu_pipeline.h"

namespace npukit::schedules::npu {

std::vector<Halide::Argument> NpuPipeline::arguments() const {
  std::vector<Halide::Argument> args;
  for (const Halide::ImageParam& p : inputs) args.push_back(p);
  for (const Halide::Param<int32_t>& p : ints) args.push_back(p);
  for (const Halide::Param<float>& p : floats) args.push_back(p);
  return args;
}

}  // namespace npukit::schedules::npu
