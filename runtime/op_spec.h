// The one description of an operator that every tool reads: its tensors and named
// dimensions, its parameters and its kernels per target. What the gate checks it against
// (golden reference, input classes, tolerances, NaN/Inf contract) is in the gate library,
// keyed by op name (tools/gate/gate_hooks.h). Adding an operator means adding an
// algorithm, schedules, a golden, one of these entries (runtime/ops/) and its gate hooks.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "npukit/dtype.h"
#include "runtime/params.h"
#include "runtime/tensor.h"

namespace npukit {

struct TensorSpec {
  // inout: read and updated in place (a KV cache). The caller passes it once, as an input;
  // it is validated like an input, must not overlap any other tensor, and is reported by
  // infer_outputs (in_place) so that tools can save it and the gate can check it.
  enum class Role { input, output, inout };
  TensorSpec(std::string name_, Role role_, std::vector<std::string> dims_, std::vector<DType> dtypes_,
             std::string same_dtype_as_ = "")
      : name(std::move(name_)), role(role_), dims(std::move(dims_)), dtypes(std::move(dtypes_)),
        same_dtype_as(std::move(same_dtype_as_)) {}

  std::string name;
  Role role = Role::input;
  std::vector<std::string> dims;  // named dimensions, outermost first
  std::vector<DType> dtypes;      // allowed storage types
  std::string same_dtype_as;      // another tensor whose dtype this one must share
  bool optional = false;          // an input the op can do without
  std::string dtype_param;        // an output whose dtype a choice parameter names ("out")
  // Its values are read on the host (by check() or as a kernel's scalar argument): on
  // gpu-cuda a CUDA device tensor is copied to the host for the call (attention's positions).
  bool host_data = false;
  // An integer input that stands for real values through two of the op's parameters:
  // real = <scale_param> · (x − <zero_point_param>). `npukit calibrate` computes them from
  // sample activations; empty for every other tensor.
  std::string scale_param, zero_point_param;
  bool quantized() const { return !scale_param.empty(); }

  bool read() const { return role != Role::output; }      // the caller passes it with the inputs
  bool written() const { return role != Role::input; }    // the kernel writes it
};

struct OpSpec;
class ScratchArena;

// A constant input packed once by a prepared op (npukit_op_set_constant): `value` is what
// the kernel reads instead of the tensor; `bytes` is memory of the op's own, at least the
// tensor's size, that stands for the tensor in validation (overlap checks; never read).
class GpuConstantCopies;
struct PackedConstant {
  PackedConstant() = default;
  PackedConstant(std::shared_ptr<const void> value_, const void* bytes_) : value(std::move(value_)), bytes(bytes_) {}
  std::shared_ptr<const void> value;
  const void* bytes = nullptr;
  // A GPU prepared op's device copies of `value`'s parts (runtime/gpu_memory.h).
  std::shared_ptr<GpuConstantCopies> gpu;
};
using PackedConstants = std::map<std::string, PackedConstant, NameLess>;

// Named dimensions ("rows", "hidden") bound to numbers.
using DimMap = std::map<std::string, int64_t, NameLess>;

// The most tensors an op may have (qkv_attention has 9).
inline constexpr size_t kMaxOpTensors = 16;

// A Call's tensors by their position in OpSpec::tensors, pointing into its own map: what a
// prepared op's reused call keeps, so that a kernel's lookups scan a few names instead of
// searching the map. A copy (or move) is another map, so it starts without an index.
struct TensorSlots {
  const TensorView* at[kMaxOpTensors] = {};
  bool set = false;
  TensorSlots() = default;
  TensorSlots(const TensorSlots&) {}
  TensorSlots& operator=(const TensorSlots&) {
    set = false;
    return *this;
  }
};

// A validated invocation: every tensor present with the right shape and dtype, every
// parameter resolved and in range, and the named dimensions bound to numbers.
struct Call {
  const OpSpec* op = nullptr;
  std::string target;  // "cpu", ...
  std::string tier;    // forced CPU tier ("avx2" for "cpu:avx2"): kernels run their best at or below it; empty = best
  std::string arch;    // the architecture of target "npu-sim:<arch>" (preset or file)
  TensorMap tensors;
  Params params;
  DimMap dims;
  const PackedConstants* packed = nullptr;  // a prepared op's constants, by tensor name
  TensorSlots slots;                        // set by a prepared op; none: look names up in `tensors`
  // Host copies of the CUDA tensors the op reads on the host (TensorSpec::host_data): their
  // views in `tensors` point here. Shared, so that a copy of the Call stays valid.
  std::vector<std::shared_ptr<const std::vector<char>>> host_copies;
  // A prepared op's arena for the run's intermediates (runtime/scratch_arena.h). A copy of
  // the Call has none, so two copies never share one.
  struct ArenaRef {
    ScratchArena* p = nullptr;
    ArenaRef() = default;
    ArenaRef(const ArenaRef&) {}
    ArenaRef& operator=(const ArenaRef&) {
      p = nullptr;
      return *this;
    }
  } arena;

  const TensorView& tensor(std::string_view name) const;
  int64_t dim(std::string_view name) const;
  // The packed form of constant `name` as the op's OpSpec::constants packer made it, or
  // nullptr when the caller passed the tensor itself (the kernel packs it then).
  template <class T>
  const T* packed_constant(std::string_view name) const {
    if (packed == nullptr) return nullptr;
    auto it = find_name(*packed, name);
    return it == packed->end() ? nullptr : static_cast<const T*>(it->second.value.get());
  }
};

using KernelFn = std::function<void(const Call&)>;

struct OpSpec {
  std::string name;
  std::string summary;
  std::vector<TensorSpec> tensors;
  std::vector<ParamSpec> params;
  // Rules beyond shapes, dtypes and parameter ranges (e.g. rotary_dim ≤ head_dim).
  std::function<void(const Call&)> check;
  std::map<std::string, KernelFn> kernels;  // by target family: "cpu", "gpu-opencl", ...
  std::vector<std::string> cpu_tiers;       // the tiers its CPU kernels ship, best first
  // Its gpu-cuda kernel takes CUDA device tensors without copies: its check and its kernel
  // read no tensor data on the host, other than the tensors marked host_data, which are
  // copied to the host first (attention's positions; int8_gemm's scales, bias, and w unless
  // a prepared op holds it as a constant).
  bool cuda_tensors = false;
  // Inputs a prepared op may hold constant (weights), each with the packing step the kernel
  // would otherwise repeat on every call; it gets a tensor already checked against its spec.
  std::map<std::string, std::function<PackedConstant(const TensorView&)>> constants;

  const TensorSpec& tensor(const std::string& name) const;
};

}  // namespace npukit
