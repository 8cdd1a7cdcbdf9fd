// Prepared ops (npukit_op_create once per parameter set) kept for the torch ops, so that
// a call at batch 1 pays a lookup, not a create: parameters are parsed once per value.
// Least recently used first out: a parameter that changes every call (qkv_attention's
// pos) costs a create per call, and no unbounded growth; a create for ops with packed
// weights starts from a cached op on the same weights (npukit_op_create_like), so the
// weights are not packed again.
#pragma once

#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <variant>
#include <vector>

#include "npukit/npukit.h"

namespace npukit::torch_ext {

using ParamValue = std::variant<double, int64_t, std::string>;
using PreparedPtr = std::shared_ptr<npukit_op>;

// npukit_op_create's op, or a Python-visible error carrying npukit_last_error. `sibling` is
// the most recently used op of the cache on the same constant objects (nullptr if none).
using MakePrepared = std::function<PreparedPtr(const PreparedPtr& sibling)>;

class PreparedCache {
 public:
  explicit PreparedCache(size_t capacity) : capacity_(capacity) {}

  // The op prepared for these parameter values and constant objects (by id), made by
  // `make` when absent. Thread-safe; `make` runs under the lock.
  PreparedPtr get(const ParamValue* params, size_t n_params, const uint64_t* ids, size_t n_ids,
                  const MakePrepared& make);
  size_t size();  // prepared ops held

 private:
  struct Entry {
    std::vector<ParamValue> params;
    std::vector<uint64_t> ids;
    PreparedPtr op;
  };
  const size_t capacity_;
  std::mutex mutex_;
  std::list<Entry> entries_;  // most recently used first
};

// The parameters as npukit_op_create takes them (name=value text).
std::vector<std::pair<std::string, std::string>> param_texts(const npukit_op_info& info, const ParamValue* values);

// Wraps npukit_op_create's result, or npukit_op_create_like's from `like` (every parameter
// given, so only its constants carry over); nullptr when it failed (npukit_last_error says why).
PreparedPtr create_prepared(const npukit_op_info& info, const ParamValue* values, const npukit_op* like = nullptr);

}  // namespace npukit::torch_ext
