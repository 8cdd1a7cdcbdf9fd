// The PyTorch extension (libnpukit_torch.so): every op of libnpukit.so as torch.ops.npukit.<op>,
// its schema derived from the op's description (op_binding.h), all served by one boxed kernel
// per op over a cached prepared op; torch.classes.npukit.Int8Weights holds weights packed once.
// The extension's only TU with torch headers (slow to compile): keep it the only one.
#include <ATen/core/Tensor.h>
#include <ATen/core/stack.h>
#include <ATen/ops/empty.h>
#include <torch/custom_class.h>
#include <torch/library.h>

#include <atomic>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "npukit/npukit.h"
#include "runtime/torch/op_binding.h"
#include "runtime/torch/prepared_cache.h"

namespace npukit::torch_ext {
namespace {

constexpr size_t kMaxTensors = 16;  // PreparedOp::kMaxTensors
constexpr size_t kMaxParams = 16;
constexpr size_t kOpCacheSize = 16;     // parameter sets per op
constexpr size_t kWeightCacheSize = 8;  // prepared ops per packed-weight object

// int8 weights packed once per prepared op that uses them (npukit_op_set_constant). The
// tensor is kept, not copied: treat it as frozen while the object lives.
struct Int8Weights : torch::CustomClassHolder {
  explicit Int8Weights(const at::Tensor& w) : weight(w.contiguous()) {}
  at::Tensor weight;
  const uint64_t id = next_id++;  // never reused, unlike an address: keys the prepared ops
  PreparedCache cache{kWeightCacheSize};
  static std::atomic<uint64_t> next_id;
};
std::atomic<uint64_t> Int8Weights::next_id{1};

[[noreturn]] void raise(npukit_status status, const std::string& message) {
  const c10::SourceLocation here{__func__, __FILE__, __LINE__};
  if (status == NPUKIT_INVALID_ARGUMENT) throw c10::ValueError(here, message);
  if (status == NPUKIT_UNSUPPORTED) throw c10::NotImplementedError(here, message);
  throw c10::Error(here, message);
}

bool dl_dtype(at::ScalarType t, DLDataType* out) {
  switch (t) {
    case at::kFloat: *out = {kDLFloat, 32, 1}; return true;
    case at::kHalf: *out = {kDLFloat, 16, 1}; return true;
    case at::kDouble: *out = {kDLFloat, 64, 1}; return true;
    case at::kChar: *out = {kDLInt, 8, 1}; return true;
    case at::kByte: *out = {kDLUInt, 8, 1}; return true;
    case at::kInt: *out = {kDLInt, 32, 1}; return true;
    case at::kLong: *out = {kDLInt, 64, 1}; return true;
    default: return false;
  }
}

at::ScalarType scalar_type(const DLDataType& t) {
  for (at::ScalarType s : {at::kFloat, at::kHalf, at::kDouble, at::kChar, at::kByte, at::kInt, at::kLong}) {
    DLDataType d;
    if (dl_dtype(s, &d) && d.code == t.code && d.bits == t.bits) return s;
  }
  raise(NPUKIT_INTERNAL, "npukit dtype (code " + std::to_string(t.code) + ", bits " + std::to_string(t.bits) +
                             ") has no torch dtype");
}

std::string allowed_dtypes(const npukit_tensor_info& t) {
  std::string s;
  for (size_t i = 0; i < t.n_dtypes; ++i) s += (i ? ", " : "") + std::string(c10::toString(scalar_type(t.dtypes[i])));
  return s;
}

DLTensor dl_tensor(const npukit_op_info& info, size_t slot, const at::Tensor& t) {
  DLTensor d{};
  if (!dl_dtype(t.scalar_type(), &d.dtype)) {
    raise(NPUKIT_INVALID_ARGUMENT, std::string(info.name) + ": tensor " + info.tensors[slot].name + " is " +
                                       c10::toString(t.scalar_type()) + ": it takes " + allowed_dtypes(info.tensors[slot]));
  }
  d.data = t.data_ptr();
  d.device = {t.is_cuda() ? kDLCUDA : kDLCPU, t.is_cuda() ? static_cast<int32_t>(t.get_device()) : 0};
  d.ndim = static_cast<int32_t>(t.dim());
  d.shape = const_cast<int64_t*>(t.sizes().data());
  d.strides = const_cast<int64_t*>(t.strides().data());  // npukit refuses what is not compact
  return d;
}

std::string dims_text(const npukit_tensor_info& t) {
  std::string s;
  for (size_t i = 0; i < t.ndim; ++i) s += (i ? ", " : "") + std::string(t.dims[i]);
  return "(" + s + ")";
}

// One op overload: reads the stack into npukit slots, allocates the outputs by the op's
// named dimensions, and (unless on the Meta device) runs the prepared op for the parameters.
class Kernel : public c10::OperatorKernel {
 public:
  Kernel(const OpBinding& b, bool meta) : b_(b), info_(*b.info), meta_(meta) {
    for (const Arg& a : b.args) out_given_ |= a.kind == Arg::Kind::output;
  }

  void operator()(const c10::OperatorHandle&, c10::DispatchKeySet, torch::jit::Stack* stack) {
    const size_t n_args = b_.args.size();
    c10::IValue* args = stack->data() + (stack->size() - n_args);
    const at::Tensor* tensors[kMaxTensors] = {};
    Int8Weights* constants[kMaxTensors] = {};
    ParamValue params[kMaxParams];
    // The cache key's objects: the op (a weights object's cache serves every op it is passed
    // to), then the weights objects in slot order.
    uint64_t ids[kMaxTensors + 1] = {reinterpret_cast<uintptr_t>(&info_)};
    size_t n_ids = 1;
    c10::intrusive_ptr<Int8Weights> holders[kMaxTensors];
    for (size_t i = 0; i < n_args; ++i) {
      const Arg& a = b_.args[i];
      c10::IValue& v = args[i];
      if (a.kind == Arg::Kind::param) {
        if (v.isDouble()) params[a.index] = v.toDouble();
        else if (v.isInt()) params[a.index] = v.toInt();
        else params[a.index] = v.toStringRef();
      } else if (!v.isNone()) {
        if (a.kind == Arg::Kind::tensor || a.kind == Arg::Kind::output) {
          tensors[a.index] = &v.toTensor();
        } else {
          holders[a.index] = v.toCustomClass<Int8Weights>();
          constants[a.index] = holders[a.index].get();
          tensors[a.index] = &constants[a.index]->weight;  // for the output sizes only
          ids[n_ids++] = constants[a.index]->id;
        }
      }
    }
    c10::SmallVector<at::Tensor, 4> outputs;
    bool sized = true;
    if (out_given_) {
      for (const OutputRule& r : b_.outputs) outputs.push_back(*tensors[r.slot]);  // npukit checks them
    } else {
      sized = allocate_outputs(tensors, constants, params, outputs);
    }
    if (meta_) {
      if (!sized) raise(NPUKIT_INVALID_ARGUMENT, rank_error(tensors));
    } else {
      run(tensors, constants, params, ids, n_ids, sized ? outputs.data() : nullptr);
    }
    torch::jit::drop(*stack, n_args);
    for (at::Tensor& t : outputs) torch::jit::push(*stack, std::move(t));
  }

 private:
  // False when an input's rank is not its spec's (npukit's checks then say so).
  bool allocate_outputs(const at::Tensor* const* tensors, Int8Weights* const* constants, const ParamValue* params,
                        c10::SmallVector<at::Tensor, 4>& out) const {
    const at::Tensor* any = nullptr;  // the outputs' device: the first tensor argument's
    for (size_t i = 0; i < info_.n_tensors && !any; ++i) any = constants[i] ? nullptr : tensors[i];
    for (const OutputRule& r : b_.outputs) {
      c10::SmallVector<int64_t, 8> shape;
      for (const DimSource& d : r.dims) {
        const at::Tensor* from = nullptr;
        size_t axis = 0;
        for (const auto& [slot, a] : d.from) {
          if (tensors[slot] == nullptr) continue;
          if (static_cast<size_t>(tensors[slot]->dim()) != info_.tensors[slot].ndim) return false;
          from = tensors[slot], axis = a;
          break;
        }
        if (from == nullptr) return false;
        shape.push_back(from->size(static_cast<int64_t>(axis)));
      }
      // An input of a dtype npukit lacks, or a parameter naming none: dtype_rule's fallback,
      // and the run's checks report the fault.
      DLDataType dt = r.dtype;
      if (r.dtype_rule == OutputRule::DType::same_as && tensors[r.from]) {
        if (!dl_dtype(tensors[r.from]->scalar_type(), &dt)) dt = r.dtype;
      } else if (r.dtype_rule == OutputRule::DType::param) {
        if (!dtype_named(std::get<std::string>(params[r.from]).c_str(), &dt)) dt = r.dtype;
      }
      out.push_back(at::empty(shape, at::TensorOptions().dtype(scalar_type(dt)).device(any ? any->device() : at::kCPU)));
    }
    return true;
  }

  std::string rank_error(const at::Tensor* const* tensors) const {
    for (size_t i = 0; i < info_.n_tensors; ++i) {
      const npukit_tensor_info& t = info_.tensors[i];
      if (tensors[i] && static_cast<size_t>(tensors[i]->dim()) != t.ndim) {
        // bind_call's words, which the CPU kernel gives for the same tensors
        std::string shape;
        for (int64_t s : tensors[i]->sizes()) shape += (shape.empty() ? "" : ", ") + std::to_string(s);
        return std::string(info_.name) + ": tensor " + t.name + ": shape [" + shape + "] has rank " +
               std::to_string(tensors[i]->dim()) + "; expected rank " + std::to_string(t.ndim) + " " + dims_text(t);
      }
    }
    return std::string(info_.name) + ": an input is missing";
  }

  // The prepared op for these parameters: cached by the op, or, with packed weights, by the
  // first weight object (so that the packed copies live and die with the weights). New
  // parameters on the same weights (a decode step's pos) start from an op that has them
  // packed already.
  PreparedPtr prepared(Int8Weights* const* constants, const ParamValue* params, const uint64_t* ids, size_t n_ids) {
    Int8Weights* first = nullptr;
    for (size_t i = 0; i < info_.n_tensors && !first; ++i) first = constants[i];
    PreparedCache& cache = first ? first->cache : cache_;
    return cache.get(params, info_.n_params, ids, n_ids, [&](const PreparedPtr& sibling) {
      const bool share = first != nullptr && sibling != nullptr;
      PreparedPtr op = create_prepared(info_, params, share ? sibling.get() : nullptr);
      if (!op) raise(NPUKIT_INVALID_ARGUMENT, npukit_last_error());
      if (share) return op;
      for (size_t i = 0; i < info_.n_tensors; ++i) {
        if (!constants[i]) continue;
        const DLTensor w = dl_tensor(info_, i, constants[i]->weight);
        const npukit_status s = npukit_op_set_constant(op.get(), info_.tensors[i].name, &w);
        if (s != NPUKIT_OK) raise(s, npukit_last_error());
      }
      return op;
    });
  }

  void run(const at::Tensor* const* tensors, Int8Weights* const* constants, const ParamValue* params,
           const uint64_t* ids, size_t n_ids, const at::Tensor* outputs) {
    const PreparedPtr op = prepared(constants, params, ids, n_ids);
    DLTensor dl[kMaxTensors];
    const DLTensor* slots[kMaxTensors] = {};
    for (size_t i = 0; i < info_.n_tensors; ++i) {
      if (tensors[i] && !constants[i]) dl[i] = dl_tensor(info_, i, *tensors[i]), slots[i] = &dl[i];
    }
    for (size_t o = 0; outputs && o < b_.outputs.size(); ++o) {
      const size_t slot = b_.outputs[o].slot;
      dl[slot] = dl_tensor(info_, slot, outputs[o]), slots[slot] = &dl[slot];
    }
    const npukit_status s = npukit_op_run_positional(op.get(), slots, info_.n_tensors);
    if (s != NPUKIT_OK) raise(s, npukit_last_error());
    if (!outputs) raise(NPUKIT_INTERNAL, std::string(info_.name) + ": ran without its outputs");
  }

  const OpBinding& b_;
  const npukit_op_info& info_;
  const bool meta_;
  bool out_given_ = false;  // an out= overload: the caller's outputs, nothing allocated
  PreparedCache cache_{kOpCacheSize};
};

const std::vector<OpBinding>& bindings() {
  static const std::vector<OpBinding> all = [] {
    std::vector<OpBinding> out;
    for (size_t i = 0; i < npukit_op_count(); ++i) {
      const npukit_op_info* info = npukit_op_describe(npukit_op_name(i));
      if (!info || info->n_tensors > kMaxTensors || info->n_params > kMaxParams) continue;
      for (OpBinding& b : bindings_of(*info, "npukit", "__torch__.torch.classes.npukit.Int8Weights")) {
        out.push_back(std::move(b));
      }
    }
    return out;
  }();
  return all;
}

std::string qualified(const OpBinding& b) { return b.overload.empty() ? b.name : b.name + "." + b.overload; }

void register_kernels(torch::Library& m, bool meta) {
  for (const OpBinding& b : bindings()) {
    m.impl(qualified(b).c_str(), torch::CppFunction::makeFromBoxedFunctor(std::make_unique<Kernel>(b, meta)));
  }
}

}  // namespace
}  // namespace npukit::torch_ext

TORCH_LIBRARY(npukit, m) {
  using npukit::torch_ext::Int8Weights;
  m.class_<Int8Weights>("Int8Weights")
      .def(torch::init<at::Tensor>())
      .def("weight", [](const c10::intrusive_ptr<Int8Weights>& self) { return self->weight; })
      // How many packed copies it holds (one per parameter set it ran with, at most 8).
      .def("prepared_ops", [](const c10::intrusive_ptr<Int8Weights>& self) {
        return static_cast<int64_t>(self->cache.size());
      });
  for (const auto& b : npukit::torch_ext::bindings()) m.def(torch::schema(b.schema.c_str(), c10::AliasAnalysisKind::FROM_SCHEMA));
}

TORCH_LIBRARY_IMPL(npukit, CPU, m) { npukit::torch_ext::register_kernels(m, false); }

TORCH_LIBRARY_IMPL(npukit, Meta, m) { npukit::torch_ext::register_kernels(m, true); }

// Torch 1.13 has an autograd fallthrough for CPU but none for Meta: without this, Meta
// tensors stop at AutogradMeta. (No autograd formulas: the ops are for inference.)
TORCH_LIBRARY_IMPL(npukit, AutogradMeta, m) {
  for (const auto& b : npukit::torch_ext::bindings()) {
    m.impl(npukit::torch_ext::qualified(b).c_str(), torch::CppFunction::makeFallthrough());
  }
}
