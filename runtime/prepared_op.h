// A prepared op (the C ABI's npukit_op): an op bound once to a target and parameters,
// its kernel and its packed constants kept, so that a run checks only what can change
// between calls: the tensors' presence, shapes, dtypes, pointers and overlap. A run
// allocates nothing on the heap and parses no text (docs/c_api.md, "Prepared ops").
//
// The run's checks accept only calls that bind_call accepts; anything they do not accept
// goes to bind_call itself, which reports the error with its usual message (or, should the
// fast checks have been stricter, binds the call and runs it). So there is one set of rules
// and messages, and the fast path cannot let through what bind_call refuses.
#pragma once

#include <dlpack/dlpack.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "runtime/op_spec.h"

namespace npukit {

class PreparedOp {
 public:
  static constexpr size_t kMaxTensors = kMaxOpTensors;
  static constexpr size_t kMaxDims = 16;     // distinct named dimensions of an op

  // Resolves the parameters (text, as `npukit run --param`) and the target; an error is
  // bind_call's message for them.
  PreparedOp(const OpSpec& op, const std::string& target, std::map<std::string, std::string> params);
  // `base`'s op and target with `params` over base's parameters (those not named keep base's
  // values), sharing base's packed constants: a per-step parameter such as qkv_attention's
  // pos costs a create, not a repack. Not concurrently with set_constant on `base`.
  PreparedOp(const PreparedOp& base, const std::map<std::string, std::string>& params);
  ~PreparedOp();
  PreparedOp(const PreparedOp&) = delete;
  PreparedOp& operator=(const PreparedOp&) = delete;

  const OpSpec& op() const { return op_; }
  // The index of `name` in op().tensors, or -1.
  int slot_of(const char* name) const;

  // Packs input `name` once (one of op().constants); later runs must not pass it. Calling it
  // again replaces it. Not concurrently with run().
  void set_constant(const char* name, const DLTensor* tensor);

  // Runs on tensors[i] for op().tensors[i] (NULL: absent, or a constant). Safe to call from
  // many threads at once, on different output tensors.
  void run(const DLTensor* const* tensors) const;

  // bind_call over `views` (by name) plus the constants, with this op's target and
  // parameters: the reference check that reports an error's message.
  Call bind(TensorMap views) const;

 private:
  static constexpr size_t kMaxRank = 8;  // a tensor's dimensions (the ops' have up to 4)
  struct Slot {
    // The allowed dtypes as DLPack spells them (code | bits << 8 | lanes << 16), beside ours.
    uint32_t dl_codes[8] = {};
    DType dl_dtypes[8] = {};
    int n_dtypes = 0;
    int same_as = -1;          // the slot whose dtype this one must share
    int out_dtype = -1;        // an output's dtype when it does not follow same_as
    int rank = 0;
    uint8_t dims[kMaxRank] = {};  // dimension ids, outermost first
    uint32_t overlap_mask = 0;    // for outputs and inout: every other slot that is read or written
    bool read = false, output = false, inout = false, optional = false;
    bool host_data = false;  // TensorSpec::host_data
  };
  struct Constant {
    DType dtype;
    Dims shape;
    int64_t bytes;      // numel · dtype size
    const char* data;   // the PackedConstant's bytes, standing for the tensor in overlap checks
  };
  struct Bound;    // one run's checked tensors
  struct Scratch;  // a Call reused run after run
  class Lease;

  bool check(const DLTensor* const* tensors, Bound& b) const;
  [[noreturn]] void constant_passed(size_t slot) const;
  void run_slow(const DLTensor* const* tensors) const;
  void refit(Scratch& s, uint32_t present) const;
  std::unique_ptr<Scratch> acquire() const;
  void release(std::unique_ptr<Scratch> s) const;

  const OpSpec& op_;
  const std::string target_;
  const std::map<std::string, std::string> params_;
  Call prototype_;  // target, tier, arch and resolved parameters
  const KernelFn* kernel_ = nullptr;
  bool cuda_ok_ = false;  // kDLCUDA tensors go straight to the kernel
  std::vector<std::string> dim_names_;
  std::vector<Slot> slots_;
  std::vector<std::optional<Constant>> constants_;  // by slot
  PackedConstants packed_;                          // by name; Call::packed points here
  uint64_t generation_ = 0;                         // bumped by set_constant

  // Idle scratch Calls: a run takes one and puts it back. The first kSlots are exchanged
  // with one atomic operation each way (no lock between concurrent runs); more concurrent
  // runs than that share a mutex-guarded overflow. Each thread tries its own home slot
  // first, and each slot has its own cache line: two threads calling one op then touch
  // neither each other's slot nor each other's Call (measured in bench/c_api_bench).
  static constexpr size_t kSlots = 8;
  struct alignas(64) IdleSlot {
    std::atomic<Scratch*> scratch{nullptr};
  };
  mutable IdleSlot slots_idle_[kSlots];
  mutable std::mutex pool_mutex_;
  mutable std::vector<std::unique_ptr<Scratch>> pool_;
};

}  // namespace npukit
