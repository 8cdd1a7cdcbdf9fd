#include "runtime/bind.h"

#include <climits>
#include <cstdint>

#include "runtime/error.h"
#include "runtime/gpu_device.h"
#include "runtime/registry.h"
#include "runtime/text.h"

namespace npukit {
namespace {

std::string dtype_list(const std::vector<DType>& ts) { return join_names(ts, dtype_name); }

std::string dims_string(const std::vector<std::string>& dims) {
  std::string s = "(";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + dims[i];
  return s + ")";
}

// Checks one tensor against its spec and binds its named dimensions.
void bind_tensor(const OpSpec& op, const TensorSpec& spec, const TensorView& t,
                 DimMap& dims,
                 std::map<std::string, std::string>& bound_by) {
  const std::string what = op.name + ": tensor " + spec.name;
  bool allowed = false;
  for (DType d : spec.dtypes) allowed = allowed || d == t.dtype;
  if (!allowed) {
    fail(Errc::invalid_argument, "{}: dtype {} is not supported (allowed: {})", what, dtype_name(t.dtype),
         dtype_list(spec.dtypes));
  }
  if (t.shape.size() != spec.dims.size()) {
    fail(Errc::invalid_argument, "{}: shape {} has rank {}; expected rank {} {}", what, shape_string(t.shape),
         t.shape.size(), spec.dims.size(), dims_string(spec.dims));
  }
  if (!t.strides.empty() && t.strides.size() != t.shape.size()) {
    fail(Errc::invalid_argument, "{}: strides and shape differ in rank", what);
  }
  if (!t.contiguous()) {
    fail(Errc::invalid_argument, "{}: strides {} are not C-contiguous; npukit kernels need contiguous tensors", what,
         shape_string(t.strides));
  }
  int64_t numel = 1;  // checked as it grows: the product of in-range dimensions can wrap
  for (size_t i = 0; i < spec.dims.size(); ++i) {
    const std::string& d = spec.dims[i];
    const int64_t v = t.shape[i];
    if (v < 1 || v > INT32_MAX) {
      fail(Errc::invalid_argument, "{}: dimension {} = {} must be in [1, {}]", what, d, v, INT32_MAX);
    }
    numel *= v;  // both factors are at most 2^31 - 1: no overflow
    if (numel > INT32_MAX) {
      fail(Errc::invalid_argument, "{}: shape {} has more than 2^31 - 1 elements, the kernels' limit", what,
           shape_string(t.shape));
    }
    auto it = dims.find(d);
    if (it == dims.end()) {
      dims[d] = v;
      bound_by[d] = spec.name;
    } else if (it->second != v) {
      fail(Errc::invalid_argument, "{}: dimension {} = {} but tensor {} has {} = {}; they must be equal", what, d, v,
           bound_by[d], d, it->second);
    }
  }
  // After the shape: a zero-size array's null data is reported as its zero dimension.
  if (t.data == nullptr) fail(Errc::invalid_argument, "{}: data pointer is null", what);
  // The runtime reads some tensors on the host (RoPE positions, masks) as their element
  // type, and the kernels assume that alignment too: a misaligned pointer (data +
  // byte_offset from a C caller) would be undefined behaviour (found by
  // tests/fuzz/c_api_fuzz.cpp: UBSan).
  const size_t align = dtype_size(t.dtype);
  if (reinterpret_cast<uintptr_t>(t.data) % align != 0) {
    fail(Errc::invalid_argument,
         "{}: data (with its byte offset) is not a multiple of {} bytes, the alignment of its dtype {}", what, align,
         dtype_name(t.dtype));
  }
}

void check_same_dtypes(const OpSpec& op, const TensorMap& tensors) {
  for (const TensorSpec& s : op.tensors) {
    if (s.same_dtype_as.empty()) continue;
    auto a = tensors.find(s.name), b = tensors.find(s.same_dtype_as);
    if (a == tensors.end() || b == tensors.end() || a->second.dtype == b->second.dtype) continue;
    fail(Errc::invalid_argument, "{}: tensor {} has dtype {} but must match {} ({})", op.name, s.name,
         dtype_name(a->second.dtype), s.same_dtype_as, dtype_name(b->second.dtype));
  }
}

void check_names(const OpSpec& op, const TensorMap& tensors) {
  for (const auto& [name, view] : tensors) {
    bool known = false;
    for (const TensorSpec& s : op.tensors) known = known || s.name == name;
    if (!known) {
      const std::string list = join_names(op.tensors, [](const TensorSpec& s) { return s.name; });
      fail(Errc::invalid_argument, "{}: unknown tensor '{}' (it takes: {})", op.name, name, list);
    }
  }
}

struct Bound {
  DimMap dims;
  std::map<std::string, std::string> bound_by;  // the input that set each dim, for messages
  Params params;
};

Bound bind_inputs(const OpSpec& op, const TensorMap& tensors,
                  const std::map<std::string, std::string>& params) {
  check_names(op, tensors);
  Bound b;
  for (const TensorSpec& s : op.tensors) {
    if (!s.read()) continue;
    auto it = tensors.find(s.name);
    if (it == tensors.end()) {
      if (s.optional) continue;
      fail(Errc::invalid_argument, "{}: missing {} tensor '{}'", op.name, s.written() ? "in/out" : "input", s.name);
    }
    bind_tensor(op, s, it->second, b.dims, b.bound_by);
  }
  check_same_dtypes(op, tensors);
  b.params = resolve_params(op.name, op.params, params);
  return b;
}

DType output_dtype(const TensorSpec& s, const TensorMap& tensors, const Params& params) {
  if (!s.dtype_param.empty()) {
    const std::string& name = params.choice(s.dtype_param);
    if (auto t = dtype_from_name(name)) return *t;
    fail(Errc::internal, "parameter {} = {} is not a dtype", s.dtype_param, name);
  }
  if (!s.same_dtype_as.empty()) {
    auto it = tensors.find(s.same_dtype_as);
    if (it != tensors.end()) return it->second.dtype;
  }
  return s.dtypes.front();
}

bool overlaps(const TensorView& a, const TensorView& b) {
  auto lo_a = static_cast<const char*>(a.data), lo_b = static_cast<const char*>(b.data);
  auto hi_a = lo_a + a.numel() * dtype_size(a.dtype), hi_b = lo_b + b.numel() * dtype_size(b.dtype);
  return lo_a < hi_b && lo_b < hi_a;
}

}  // namespace

std::map<std::string, OutputInfo> infer_outputs(const OpSpec& op,
                                                const TensorMap& inputs,
                                                const std::map<std::string, std::string>& params) {
  Bound b = bind_inputs(op, inputs, params);
  std::map<std::string, OutputInfo> out;
  for (const TensorSpec& s : op.tensors) {
    if (s.role == TensorSpec::Role::inout && inputs.count(s.name)) {
      const TensorView& t = inputs.at(s.name);
      out[s.name] = OutputInfo{t.dtype, t.shape.to_vector(), true};
    }
    if (s.role != TensorSpec::Role::output) continue;
    OutputInfo info{output_dtype(s, inputs, b.params), {}};
    for (const std::string& d : s.dims) {
      auto it = b.dims.find(d);
      if (it == b.dims.end()) fail(Errc::internal, "{}: output dimension {} is unbound", op.name, d);
      info.shape.push_back(it->second);
    }
    out[s.name] = info;
  }
  return out;
}

void check_tensor(const OpSpec& op, const TensorSpec& spec, const TensorView& t) {
  DimMap dims;
  std::map<std::string, std::string> bound_by;
  bind_tensor(op, spec, t, dims, bound_by);
}

void bind_target(const OpSpec& op, const std::string& target, Call& call) {
  call.op = &op;
  const size_t colon = target.find(':');
  call.target = target.substr(0, colon);
  call.tier = colon == std::string::npos ? "" : target.substr(colon + 1);
  if (!find_kernel(op, call.target)) {
    fail(Errc::unsupported, "{}: no kernel for target '{}' (it has: {})", op.name, call.target,
         join_names(kernel_families(op)));
  }
  if (call.target == "npu-sim") {
    call.arch = call.tier;  // npu-sim:<preset or arch file>
    call.tier.clear();
    if (call.arch.empty())
      fail(Errc::invalid_argument, "target {}: npu-sim needs an architecture (npu-sim:PRESET or npu-sim:FILE.yaml)",
           target);
  } else if (!call.tier.empty() && call.target != "cpu") {
    fail(Errc::invalid_argument, "target {}: only the cpu target takes a tier", target);
  }
}

namespace {

// The CUDA tensors the op reads on the host (TensorSpec::host_data), copied to host memory
// the call keeps; their views then point there. bind_tensor has checked they are compact.
void stage_host_data(const OpSpec& op, Call& call) {
  for (const TensorSpec& s : op.tensors) {
    if (!s.host_data) continue;
    auto it = call.tensors.find(s.name);
    if (it == call.tensors.end() || it->second.memory != TensorView::Memory::cuda) continue;
    TensorView& v = it->second;
    auto copy = std::make_shared<std::vector<char>>(static_cast<size_t>(v.numel()) * dtype_size(v.dtype));
    cuda_copy_to_host(copy->data(), v.data, copy->size(), op.name, s.name);
    v.data = copy->data();
    v.memory = TensorView::Memory::host;
    call.host_copies.push_back(std::move(copy));
  }
}

}  // namespace

Call bind_call(const OpSpec& op, const std::string& target,
               const TensorMap& tensors,
               const std::map<std::string, std::string>& params) {
  Call call;
  bind_target(op, target, call);

  for (const auto& [name, t] : tensors) {
    if (t.memory != TensorView::Memory::cuda) continue;
    if (call.target != "gpu-cuda") {
      fail(Errc::unsupported,
           "{}: tensor {} is CUDA device memory (kDLCUDA); target '{}' takes host tensors only (device tensors need "
           "target gpu-cuda)",
           op.name, name, target);
    }
    if (!op.cuda_tensors) {
      fail(Errc::unsupported,
           "{}: tensor {} is CUDA device memory (kDLCUDA); {} takes host tensors only, also on target gpu-cuda",
           op.name, name, op.name);
    }
  }
  Bound b = bind_inputs(op, tensors, params);
  for (const TensorSpec& s : op.tensors) {
    if (s.role != TensorSpec::Role::output) continue;
    auto it = tensors.find(s.name);
    if (it == tensors.end()) fail(Errc::invalid_argument, "{}: missing output tensor '{}'", op.name, s.name);
    bind_tensor(op, s, it->second, b.dims, b.bound_by);
    const DType want = output_dtype(s, tensors, b.params);
    if (it->second.dtype != want) {
      fail(Errc::invalid_argument, "{}: output {} has dtype {} but must be {}", op.name, s.name,
           dtype_name(it->second.dtype), dtype_name(want));
    }
    for (const TensorSpec& in : op.tensors) {
      if (in.read() && tensors.count(in.name) && overlaps(it->second, tensors.at(in.name))) {
        fail(Errc::invalid_argument, "{}: output {} overlaps input {}; npukit does not compute in place", op.name,
             s.name, in.name);
      }
    }
    // Two outputs in one buffer would each overwrite the other (found by fuzz_c_api). Against
    // the outputs bound before this one, so that the other's shape has been checked.
    for (const TensorSpec& other : op.tensors) {
      if (&other == &s) break;
      if (other.role != TensorSpec::Role::output || !tensors.count(other.name)) continue;
      if (overlaps(it->second, tensors.at(other.name))) {
        fail(Errc::invalid_argument, "{}: output {} overlaps output {}; each output needs memory of its own", op.name,
             s.name, other.name);
      }
    }
  }
  // An inout tensor is written while the others are read: it must share memory with none.
  for (const TensorSpec& s : op.tensors) {
    if (s.role != TensorSpec::Role::inout || !tensors.count(s.name)) continue;
    for (const TensorSpec& other : op.tensors) {
      if (other.name == s.name || !other.read() || !tensors.count(other.name)) continue;
      if (overlaps(tensors.at(s.name), tensors.at(other.name))) {
        fail(Errc::invalid_argument,
             "{}: in/out tensor {} overlaps {}; it is updated in place, so it must have memory of its own", op.name,
             s.name, other.name);
      }
    }
  }
  call.tensors = tensors;
  stage_host_data(op, call);
  call.dims = std::move(b.dims);
  call.params = std::move(b.params);
  if (op.check) op.check(call);
  return call;
}

void run_call(const Call& call) { (*find_kernel(*call.op, call.target))(call); }

}  // namespace npukit
