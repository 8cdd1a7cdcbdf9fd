#include "runtime/op_info.h"

#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "runtime/dlpack_view.h"

namespace npukit {
namespace {

npukit_param_kind kind_of(ParamSpec::Kind k) {
  switch (k) {
    case ParamSpec::Kind::real: return NPUKIT_PARAM_REAL;
    case ParamSpec::Kind::integer: return NPUKIT_PARAM_INTEGER;
    case ParamSpec::Kind::choice: return NPUKIT_PARAM_CHOICE;
  }
  return NPUKIT_PARAM_REAL;
}

npukit_role role_of(TensorSpec::Role r) {
  switch (r) {
    case TensorSpec::Role::input: return NPUKIT_INPUT;
    case TensorSpec::Role::output: return NPUKIT_OUTPUT;
    case TensorSpec::Role::inout: return NPUKIT_INOUT;
  }
  return NPUKIT_INPUT;
}

// The C structs point into the OpSpec's strings (which live as long as the registry) and
// into the arrays below, which never move once built.
struct Described {
  npukit_op_info info{};
  std::vector<npukit_tensor_info> tensors;
  std::vector<npukit_param_info> params;
  std::deque<std::vector<const char*>> names;  // dims and choices, per tensor / parameter
  std::deque<std::vector<DLDataType>> dtypes;
};

std::unique_ptr<Described> build(const OpSpec& op) {
  auto d = std::make_unique<Described>();
  for (const TensorSpec& s : op.tensors) {
    auto& dims = d->names.emplace_back();
    for (const std::string& n : s.dims) dims.push_back(n.c_str());
    auto& types = d->dtypes.emplace_back();
    for (DType t : s.dtypes) types.push_back(dlpack_dtype(t));
    npukit_tensor_info t{};
    t.name = s.name.c_str();
    t.role = role_of(s.role);
    t.optional = s.optional;
    t.constant = op.constants.count(s.name) > 0;
    t.ndim = dims.size();
    t.dims = dims.data();
    t.n_dtypes = types.size();
    t.dtypes = types.data();
    t.same_dtype_as = s.same_dtype_as.c_str();
    t.dtype_param = s.dtype_param.c_str();
    d->tensors.push_back(t);
  }
  for (const ParamSpec& s : op.params) {
    auto& choices = d->names.emplace_back();
    for (const std::string& c : s.choices) choices.push_back(c.c_str());
    d->params.push_back(npukit_param_info{s.name.c_str(), kind_of(s.kind), s.default_value.c_str(), s.min, s.max,
                                          choices.size(), choices.data(), s.doc.c_str()});
  }
  d->info = npukit_op_info{op.name.c_str(), op.summary.c_str(), d->tensors.size(), d->tensors.data(),
                           d->params.size(), d->params.data()};
  return d;
}

}  // namespace

const npukit_op_info* describe(const OpSpec& op) {
  static std::mutex mutex;
  static std::map<const OpSpec*, std::unique_ptr<Described>> described;
  std::lock_guard<std::mutex> lock(mutex);
  auto& d = described[&op];
  if (!d) d = build(op);
  return &d->info;
}

}  // namespace npukit
