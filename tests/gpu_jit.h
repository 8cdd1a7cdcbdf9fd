// What the GPU schedule tests share: the OpenCL (PoCL) JIT target for this CPU, the shipped
// Generators run on it with concrete inputs, and the CUDA PTX of a Generator checked by
// ptxas, all without a GPU.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "Halide.h"

namespace npukit::gpu_test {

// The host target npukit JITs for (runtime/cpu_features.h) plus OpenCL. Loads PoCL first
// (see gpu_jit.cpp); fails the calling test with a set-up message where it is missing.
Halide::Target opencl_target();

// The host target plus CUDA at `capability` (61 or 80): for compiling only.
Halide::Target cuda_target(int capability);

using Params = std::map<std::string, std::string>;

// Halide 14 keeps GeneratorBase::build_pipeline (what its own stubs call) protected; a
// pointer to it formed through a derived class is the standard way in.
struct GeneratorAccess : Halide::Internal::GeneratorBase {
  static Halide::Pipeline build_pipeline_of(Halide::Internal::GeneratorBase& g) {
    return (g.*(&GeneratorAccess::build_pipeline))();
  }
};

// Marks a host buffer as the newer copy: Halide copies a buffer to the device only when it
// is host-dirty, and a Buffer wrapped around memory written elsewhere is not.
template <class T>
void mark_host_dirty(const T& input) {
  if constexpr (std::is_convertible_v<T, Halide::Buffer<>>) {
    Halide::Buffer<> b = input;
    b.set_host_dirty();
  }
}

// The Generator `name` for `target` with `params`, its Inputs bound to `inputs` (in
// declaration order; scalars of exactly the Input's type), every buffer host-dirty.
template <class... Inputs>
Halide::Pipeline generator_pipeline(const std::string& name, const Halide::Target& target, const Params& params,
                                    const Inputs&... inputs) {
  auto gen = Halide::Internal::GeneratorRegistry::create(name, Halide::GeneratorContext(target));
  Halide::Internal::GeneratorParamsMap map;
  for (const auto& [k, v] : params) map[k] = v;
  gen->set_generator_param_values(map);
  (mark_host_dirty(inputs), ...);
  gen->set_inputs(inputs...);
  return GeneratorAccess::build_pipeline_of(*gen);
}

// Runs `p` into `out` on `target` and brings the result back to the host.
template <class T, int D>
void realize_on(Halide::Pipeline p, Halide::Buffer<T, D>& out, const Halide::Target& target) {
  p.realize(out, target);
  out.copy_to_host();
}

// The same for a pipeline with several outputs.
void realize_all_on(Halide::Pipeline p, std::vector<Halide::Buffer<>> outs, const Halide::Target& target);

// The PTX of the Generator `name` with `params` compiled for `target` (CUDA).
std::string generator_ptx(const std::string& name, const Halide::Target& target, const Params& params);

// ptxas -arch=<arch> on `ptx`: "" when it assembles, else ptxas's messages.
std::string ptxas_errors(const std::string& ptx, const std::string& arch);

}  // namespace npukit::gpu_test
