#include "runtime/prepared_op.h"

#include <climits>
#include <cstring>

#include "runtime/bind.h"
#include "runtime/dlpack_view.h"
#include "runtime/error.h"
#include "runtime/gpu_call.h"
#include "runtime/gpu_device.h"
#include "runtime/gpu_memory.h"
#include "runtime/registry.h"
#include "runtime/scratch_arena.h"
#include "runtime/text.h"

namespace npukit {
namespace {

uint32_t dl_code(const DLDataType& t) {
  return static_cast<uint32_t>(t.code) | static_cast<uint32_t>(t.bits) << 8 | static_cast<uint32_t>(t.lanes) << 16;
}

// A loop, not std::equal: that calls memcmp, which costs more than the few dimensions.
bool same_shape(const Dims& a, const int64_t* b, int32_t n) {
  if (a.size() != static_cast<size_t>(n)) return false;
  for (int32_t i = 0; i < n; ++i) {
    if (a[i] != b[i]) return false;
  }
  return true;
}

int index_of(const OpSpec& op, const std::string& name) {
  for (size_t i = 0; i < op.tensors.size(); ++i) {
    if (op.tensors[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

}  // namespace

struct PreparedOp::Bound {
  int64_t dims[kMaxDims];
  DType dtype[kMaxTensors];
  const char* lo[kMaxTensors];  // each present tensor's bytes [lo, hi)
  const char* hi[kMaxTensors];
  bool cuda[kMaxTensors];
  uint32_t present = 0;
};

// A Call whose maps already hold the keys of one set of present tensors: a run only
// overwrites values (a shape vector keeps its capacity), so it allocates nothing.
struct PreparedOp::Scratch {
  Call call;
  bool fitted = false;
  uint32_t present = 0;
  uint64_t generation = 0;
  TensorView* views[kMaxTensors] = {};
  int64_t* dims[kMaxDims] = {};  // nullptr: bound by no present tensor
  // Host copies of CUDA tensors the op reads on the host (bind_call's stage_host_data); a
  // vector keeps its capacity, so a steady state allocates nothing.
  std::vector<char> host_copy[kMaxTensors];
  // The kernels' intermediates: grown to the largest run, then reused.
  ScratchArena arena;
};

class PreparedOp::Lease {
 public:
  explicit Lease(const PreparedOp& op) : op_(op), s_(op.acquire()) {}
  ~Lease() { op_.release(std::move(s_)); }
  Scratch& operator*() { return *s_; }

 private:
  const PreparedOp& op_;
  std::unique_ptr<Scratch> s_;
};

PreparedOp::PreparedOp(const OpSpec& op, const std::string& target, std::map<std::string, std::string> params)
    : op_(op), target_(target), params_(std::move(params)) {
  if (op.tensors.size() > kMaxTensors) {
    fail(Errc::internal, "{} has {} tensors; prepared ops take up to {}", op.name, op.tensors.size(), kMaxTensors);
  }
  bind_target(op, target_, prototype_);
  prototype_.params = resolve_params(op.name, op.params, params_);
  kernel_ = find_kernel(op, prototype_.target);
  cuda_ok_ = prototype_.target == "gpu-cuda" && op.cuda_tensors;
  for (const TensorSpec& s : op.tensors) {
    Slot slot;
    if (s.dtypes.size() > std::size(slot.dl_codes) || s.dims.size() > kMaxRank) {
      fail(Errc::internal, "{}: tensor {} has more dtypes or dimensions than prepared ops take", op.name, s.name);
    }
    for (DType d : s.dtypes) {
      slot.dl_codes[slot.n_dtypes] = dl_code(dlpack_dtype(d));
      slot.dl_dtypes[slot.n_dtypes++] = d;
    }
    slot.read = s.read();
    slot.output = s.role == TensorSpec::Role::output;
    slot.inout = s.role == TensorSpec::Role::inout;
    slot.optional = s.optional;
    slot.host_data = s.host_data;
    if (!s.same_dtype_as.empty()) slot.same_as = index_of(op, s.same_dtype_as);
    // bind_call's output_dtype, decided here where the parameters make it fixed.
    if (!s.dtype_param.empty()) {
      const std::optional<DType> t = dtype_from_name(prototype_.params.choice(s.dtype_param));
      if (!t) fail(Errc::internal, "parameter {} is not a dtype", s.dtype_param);
      slot.out_dtype = static_cast<int>(*t);
    } else if (slot.same_as < 0) {
      slot.out_dtype = static_cast<int>(s.dtypes.front());
    }
    for (const std::string& d : s.dims) {
      size_t id = 0;
      while (id < dim_names_.size() && dim_names_[id] != d) ++id;
      if (id == dim_names_.size()) dim_names_.push_back(d);
      slot.dims[slot.rank++] = static_cast<uint8_t>(id);
    }
    slots_.push_back(slot);
  }
  // An output must overlap no input; an in/out tensor no other tensor that is read.
  for (size_t i = 0; i < slots_.size(); ++i) {
    if (!slots_[i].output && !slots_[i].inout) continue;
    for (size_t j = 0; j < slots_.size(); ++j) {
      if (j != i && (slots_[j].read || slots_[j].output)) slots_[i].overlap_mask |= 1u << j;
    }
  }
  if (dim_names_.size() > kMaxDims) {
    fail(Errc::internal, "{} has {} named dimensions; prepared ops take up to {}", op.name, dim_names_.size(),
         kMaxDims);
  }
  constants_.resize(op.tensors.size());
  pool_.reserve(64);  // the overflow takes up to 64 more concurrent runs without allocating
}

namespace {

std::map<std::string, std::string> over(std::map<std::string, std::string> base,
                                        const std::map<std::string, std::string>& given) {
  for (const auto& [name, value] : given) base[name] = value;
  return base;
}

}  // namespace

PreparedOp::PreparedOp(const PreparedOp& base, const std::map<std::string, std::string>& params)
    : PreparedOp(base.op_, base.target_, over(base.params_, params)) {
  // The packed copies are shared (PackedConstant holds them by shared_ptr), and so are the
  // bytes the constants' overlap checks stand on.
  constants_ = base.constants_;
  packed_ = base.packed_;
  generation_ = base.generation_;
}

PreparedOp::~PreparedOp() {
  for (IdleSlot& slot : slots_idle_) delete slot.scratch.load();
}

int PreparedOp::slot_of(const char* name) const {
  for (size_t i = 0; i < op_.tensors.size(); ++i) {
    const std::string& n = op_.tensors[i].name;
    if (n[0] == name[0] && std::strcmp(n.c_str(), name) == 0) return static_cast<int>(i);
  }
  return -1;
}

void PreparedOp::set_constant(const char* name, const DLTensor* tensor) {
  if (name == nullptr) fail(Errc::invalid_argument, "{}: constant name is NULL", op_.name);
  auto packer = op_.constants.find(name);
  if (packer == op_.constants.end()) {
    const std::string list = join_names(op_.constants, [](const auto& c) { return c.first; });
    fail(Errc::invalid_argument, "{}: tensor '{}' cannot be a constant ({})", op_.name, name,
         list.empty() ? op_.name + " packs no constants" : "constants: " + list);
  }
  const int slot = index_of(op_, name);
  const TensorView v = view_of(tensor, name);
  if (v.memory != TensorView::Memory::host) {
    fail(Errc::unsupported,
         "{}: constant {} is CUDA device memory (kDLCUDA); constants are packed on the host, so they must be host "
         "tensors",
         op_.name, name);
  }
  check_tensor(op_, op_.tensors[slot], v);
  PackedConstant p = packer->second(v);
  // Uploaded at the first run that reads them, then kept on the device with the constant.
  if (is_gpu_family(prototype_.target)) p.gpu = std::make_shared<GpuConstantCopies>(prototype_.target);
  constants_[slot] = Constant{v.dtype, v.shape, v.numel() * static_cast<int64_t>(dtype_size(v.dtype)),
                              static_cast<const char*>(p.bytes)};
  packed_[name] = std::move(p);
  ++generation_;
}

void PreparedOp::constant_passed(size_t slot) const {
  const std::string& name = op_.tensors[slot].name;
  fail(Errc::invalid_argument,
       "{}: tensor {} is a constant of this prepared op, packed once by npukit_op_set_constant: pass no tensor for it "
       "to a run (NULL at its position), or call npukit_op_set_constant again to change it",
       op_.name, name);
}

// bind_call's rules, without its maps and messages: true when every tensor passes.
bool PreparedOp::check(const DLTensor* const* tensors, Bound& b) const {
  for (size_t d = 0; d < dim_names_.size(); ++d) b.dims[d] = -1;
  const size_t n = slots_.size();
  auto bind_dim = [&](int id, int64_t v) {
    if (b.dims[id] < 0) b.dims[id] = v;
    return b.dims[id] == v;
  };
  for (size_t i = 0; i < n; ++i) {
    const Slot& s = slots_[i];
    const DLTensor* t = tensors[i];
    if (const std::optional<Constant>& c = constants_[i]) {
      if (t != nullptr) constant_passed(i);
      for (int a = 0; a < s.rank; ++a) {
        if (!bind_dim(s.dims[a], c->shape[a])) return false;
      }
      b.dtype[i] = c->dtype;
      b.lo[i] = c->data;
      b.hi[i] = b.lo[i] + c->bytes;
      b.cuda[i] = false;
      b.present |= 1u << i;
      continue;
    }
    if (t == nullptr) {
      if (s.optional) continue;
      return false;  // missing
    }
    const int32_t device = device_type_code(t->device);
    b.cuda[i] = device == kDLCUDA;
    if (device != kDLCPU && !(b.cuda[i] && cuda_ok_)) return false;
    const uint32_t code = dl_code(t->dtype);
    int k = 0;
    while (k < s.n_dtypes && s.dl_codes[k] != code) ++k;
    if (k == s.n_dtypes) return false;
    const DType dtype = s.dl_dtypes[k];
    if (t->ndim != s.rank || (s.rank > 0 && t->shape == nullptr) || t->data == nullptr) return false;
    int64_t numel = 1;
    for (int a = s.rank; a-- > 0;) {
      const int64_t v = t->shape[a];
      if (v < 1 || v > INT32_MAX || !bind_dim(s.dims[a], v)) return false;
      if (t->strides != nullptr && v != 1 && t->strides[a] != numel) return false;  // not C-contiguous
      numel *= v;
      if (numel > INT32_MAX) return false;
    }
    b.dtype[i] = dtype;
    b.lo[i] = static_cast<const char*>(t->data) + t->byte_offset;
    if (reinterpret_cast<uintptr_t>(b.lo[i]) % dtype_size(dtype) != 0) return false;  // misaligned
    b.hi[i] = b.lo[i] + numel * static_cast<int64_t>(dtype_size(dtype));
    b.present |= 1u << i;
  }
  auto present = [&](size_t i) { return (b.present >> i) & 1u; };
  for (size_t i = 0; i < n; ++i) {
    if (!present(i)) continue;
    const Slot& s = slots_[i];
    if (s.same_as >= 0 && present(s.same_as) && b.dtype[i] != b.dtype[s.same_as]) return false;
    if (s.output) {
      const DType want = s.out_dtype >= 0 ? static_cast<DType>(s.out_dtype)
                         : present(s.same_as) ? b.dtype[s.same_as]
                                              : op_.tensors[i].dtypes.front();
      if (b.dtype[i] != want) return false;
    }
    for (uint32_t others = s.overlap_mask & b.present; others != 0; others &= others - 1) {
      const int j = __builtin_ctz(others);
      if (b.lo[i] < b.hi[j] && b.lo[j] < b.hi[i]) return false;
    }
  }
  return true;
}

void PreparedOp::refit(Scratch& s, uint32_t present) const {
  s.call.tensors.clear();
  s.call.dims.clear();
  for (size_t d = 0; d < kMaxDims; ++d) s.dims[d] = nullptr;
  for (size_t i = 0; i < slots_.size(); ++i) {
    s.views[i] = nullptr;
    if (!((present >> i) & 1u)) continue;
    const std::string& name = op_.tensors[i].name;
    TensorView& v = s.call.tensors[name];
    s.views[i] = &v;
    if (const std::optional<Constant>& c = constants_[i]) {
      v = TensorView{const_cast<char*>(c->data), c->dtype, c->shape, {}};
    }
    for (int a = 0; a < slots_[i].rank; ++a) {
      const int id = slots_[i].dims[a];
      if (s.dims[id] == nullptr) s.dims[id] = &s.call.dims[dim_names_[id]];
    }
  }
  s.call.packed = &packed_;
  s.call.arena.p = &s.arena;
  for (size_t i = 0; i < slots_.size(); ++i) s.call.slots.at[i] = s.views[i];
  s.call.slots.set = true;
  s.present = present;
  s.generation = generation_;
  s.fitted = true;
}

namespace {

// This thread's first choice among an op's idle slots: threads are numbered as they first
// run any prepared op, so up to kSlots concurrent callers each get a slot of their own.
// Constant-initialized and initial-exec, so that reading it is one load (no TLS init call).
thread_local size_t home_plus_one __attribute__((tls_model("initial-exec"))) = 0;

size_t home_slot(size_t slots) {
  static std::atomic<size_t> next{0};
  if (home_plus_one == 0) home_plus_one = next.fetch_add(1, std::memory_order_relaxed) + 1;
  return (home_plus_one - 1) % slots;
}

}  // namespace

std::unique_ptr<PreparedOp::Scratch> PreparedOp::acquire() const {
  const size_t home = home_slot(kSlots);
  for (size_t i = 0; i < kSlots; ++i) {
    std::atomic<Scratch*>& slot = slots_idle_[(home + i) % kSlots].scratch;
    if (slot.load(std::memory_order_relaxed) == nullptr) continue;
    if (Scratch* s = slot.exchange(nullptr, std::memory_order_acquire)) return std::unique_ptr<Scratch>(s);
  }
  {
    std::lock_guard<std::mutex> lock(pool_mutex_);
    if (!pool_.empty()) {
      std::unique_ptr<Scratch> s = std::move(pool_.back());
      pool_.pop_back();
      return s;
    }
  }
  // One more concurrent run than ever before: the only allocation of a steady state.
  auto s = std::make_unique<Scratch>();
  s->call.op = prototype_.op;
  s->call.target = prototype_.target;
  s->call.tier = prototype_.tier;
  s->call.arch = prototype_.arch;
  s->call.params = prototype_.params;
  return s;
}

void PreparedOp::release(std::unique_ptr<Scratch> s) const {
  const size_t home = home_slot(kSlots);
  for (size_t i = 0; i < kSlots; ++i) {
    std::atomic<Scratch*>& slot = slots_idle_[(home + i) % kSlots].scratch;
    Scratch* empty = nullptr;
    if (slot.load(std::memory_order_relaxed) == nullptr &&
        slot.compare_exchange_strong(empty, s.get(), std::memory_order_release, std::memory_order_relaxed)) {
      s.release();
      return;
    }
  }
  std::lock_guard<std::mutex> lock(pool_mutex_);
  pool_.push_back(std::move(s));
}

void PreparedOp::run(const DLTensor* const* tensors) const {
  Bound b;
  if (!check(tensors, b)) {
    run_slow(tensors);
    return;
  }
  Lease lease(*this);
  Scratch& s = *lease;
  if (!s.fitted || s.present != b.present || s.generation != generation_) refit(s, b.present);
  for (size_t i = 0; i < slots_.size(); ++i) {
    if (!((b.present >> i) & 1u) || constants_[i]) continue;
    const DLTensor& t = *tensors[i];
    TensorView& v = *s.views[i];
    v.data = const_cast<char*>(b.lo[i]);
    v.dtype = b.dtype[i];
    // A framework's calls mostly repeat the last shape: then nothing is written.
    if (!same_shape(v.shape, t.shape, t.ndim)) v.shape.assign(t.shape, t.shape + t.ndim);
    // check() accepted only compact strides: the view's are implied.
    if (!v.strides.empty()) v.strides.clear();
    v.memory = b.cuda[i] ? TensorView::Memory::cuda : TensorView::Memory::host;
    if (b.cuda[i] && slots_[i].host_data) {
      std::vector<char>& copy = s.host_copy[i];
      copy.resize(static_cast<size_t>(b.hi[i] - b.lo[i]));
      cuda_copy_to_host(copy.data(), b.lo[i], copy.size(), op_.name, op_.tensors[i].name);
      v.data = copy.data();
      v.memory = TensorView::Memory::host;
    }
  }
  for (size_t d = 0; d < dim_names_.size(); ++d) {
    if (s.dims[d] != nullptr) *s.dims[d] = b.dims[d];
  }
  if (op_.check) op_.check(s.call);
  (*kernel_)(s.call);
}

Call PreparedOp::bind(TensorMap views) const {
  for (size_t i = 0; i < slots_.size(); ++i) {
    const std::optional<Constant>& c = constants_[i];
    if (!c) continue;
    const std::string& name = op_.tensors[i].name;
    if (views.count(name)) constant_passed(i);
    views[name] = TensorView{const_cast<char*>(c->data), c->dtype, c->shape, {}};
  }
  Call call = bind_call(op_, target_, views, params_);
  call.packed = &packed_;
  return call;
}

void PreparedOp::run_slow(const DLTensor* const* tensors) const {
  TensorMap views;
  for (size_t i = 0; i < slots_.size(); ++i) {
    if (tensors[i] != nullptr) views[op_.tensors[i].name] = view_of(tensors[i], op_.tensors[i].name);
  }
  run_call(bind(std::move(views)));
}

}  // namespace npukit
