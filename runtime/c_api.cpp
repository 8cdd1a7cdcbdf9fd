// The C ABI (include/npukit/npukit.h) over the registry: DLTensor → TensorView, prepared
// ops (runtime/prepared_op.h), and every C++ error turned into a status and a thread-local
// message.
#include <algorithm>
#include <exception>
#include <map>
#include <string>

#include "npukit/npukit.h"
#include "runtime/bind.h"
#include "runtime/cpu_features.h"
#include "runtime/dlpack_view.h"
#include "runtime/error.h"
#include "runtime/op_info.h"
#include "runtime/plugin.h"
#include "runtime/prepared_op.h"
#include "runtime/registry.h"
#include "runtime/text.h"

struct npukit_op {
  npukit_op(const npukit::OpSpec& op, const std::string& target, std::map<std::string, std::string> params)
      : prepared(op, target, std::move(params)) {}
  npukit_op(const npukit_op& base, const std::map<std::string, std::string>& params)
      : prepared(base.prepared, params) {}
  npukit::PreparedOp prepared;
};

namespace npukit {
namespace {

// Initial-exec: every call clears it, and the default model would call __tls_get_addr.
thread_local std::string last_error __attribute__((tls_model("initial-exec")));

npukit_status status_of(Errc code) {
  switch (code) {
    case Errc::invalid_argument: return NPUKIT_INVALID_ARGUMENT;
    case Errc::unsupported: return NPUKIT_UNSUPPORTED;
    case Errc::kernel_failed: return NPUKIT_KERNEL_FAILED;
    case Errc::internal: return NPUKIT_INTERNAL;
  }
  return NPUKIT_INTERNAL;
}

// Runs `f`, turning whatever it throws into a status and this thread's message.
template <class F>
npukit_status guarded(F&& f) {
  last_error.clear();
  try {
    f();
    return NPUKIT_OK;
  } catch (const Error& e) {
    last_error = one_line(e.what());  // it may echo a caller's name or value
    return status_of(e.code());
  } catch (const std::exception& e) {
    last_error = one_line(std::string("internal error: ") + e.what());
    return NPUKIT_INTERNAL;
  } catch (...) {
    last_error = "internal error: unknown exception";
    return NPUKIT_INTERNAL;
  }
}

std::map<std::string, std::string> param_texts(const npukit_param* params, size_t n_params) {
  if (n_params > 0 && params == nullptr) fail(Errc::invalid_argument, "params is NULL but n_params > 0");
  std::map<std::string, std::string> values;
  for (size_t i = 0; i < n_params; ++i) {
    if (params[i].name == nullptr || params[i].value == nullptr) {
      fail(Errc::invalid_argument, "params[{}] has a NULL name or value", i);
    }
    if (!values.emplace(params[i].name, params[i].value).second) {
      fail(Errc::invalid_argument, "parameter {} given twice", params[i].name);
    }
  }
  return values;
}

TensorMap tensor_views(const npukit_tensor* tensors, size_t n_tensors) {
  if (n_tensors > 0 && tensors == nullptr) fail(Errc::invalid_argument, "tensors is NULL but n_tensors > 0");
  TensorMap views;
  for (size_t i = 0; i < n_tensors; ++i) {
    if (tensors[i].name == nullptr) fail(Errc::invalid_argument, "tensors[{}].name is NULL", i);
    TensorView v = view_of(tensors[i].tensor, tensors[i].name);
    if (!views.emplace(tensors[i].name, std::move(v)).second) {
      fail(Errc::invalid_argument, "tensor {} given twice", tensors[i].name);
    }
  }
  return views;
}

// Every check npukit_run made before it became create + run + destroy, in its order
// (tensors, parameters, op, binding): its first error is the one npukit_run reports.
void check_as_npukit_run(const char* op, const char* target, const npukit_tensor* tensors, size_t n_tensors,
                         const npukit_param* params, size_t n_params) {
  if (op == nullptr) fail(Errc::invalid_argument, "op is NULL");
  if (n_tensors > 0 && tensors == nullptr) fail(Errc::invalid_argument, "tensors is NULL but n_tensors > 0");
  if (n_params > 0 && params == nullptr) fail(Errc::invalid_argument, "params is NULL but n_params > 0");
  const auto views = tensor_views(tensors, n_tensors);
  const auto values = param_texts(params, n_params);
  bind_call(find_op(op), target ? target : "cpu", views, values);
}

npukit_op* create(const char* op, const char* target, const npukit_param* params, size_t n_params) {
  if (op == nullptr) fail(Errc::invalid_argument, "op is NULL");
  auto values = param_texts(params, n_params);
  return new npukit_op(find_op(op), target ? target : "cpu", std::move(values));
}

void run_named(const npukit_op* op, const npukit_tensor* tensors, size_t n_tensors) {
  if (op == nullptr) fail(Errc::invalid_argument, "op is NULL");
  if (n_tensors > 0 && tensors == nullptr) fail(Errc::invalid_argument, "tensors is NULL but n_tensors > 0");
  const PreparedOp& p = op->prepared;
  const DLTensor* slots[PreparedOp::kMaxTensors] = {};
  uint32_t seen = 0;
  bool named_ok = n_tensors <= PreparedOp::kMaxTensors;
  for (size_t i = 0; named_ok && i < n_tensors; ++i) {
    const int s = tensors[i].name ? p.slot_of(tensors[i].name) : -1;
    // Unknown, repeated or NULL: bind_call says which, with its message.
    named_ok = s >= 0 && !((seen >> s) & 1u) && tensors[i].tensor != nullptr;
    if (!named_ok) break;
    seen |= 1u << s;
    slots[s] = tensors[i].tensor;
  }
  if (!named_ok) {
    run_call(p.bind(tensor_views(tensors, n_tensors)));
    return;
  }
  p.run(slots);
}

}  // namespace
}  // namespace npukit

extern "C" {

#define NPUKIT_EXPORT __attribute__((visibility("default")))

NPUKIT_EXPORT npukit_status npukit_run(const char* op, const char* target, const npukit_tensor* tensors,
                                       size_t n_tensors, const npukit_param* params, size_t n_params) {
  using namespace npukit;
  const npukit_status status = guarded([&] {
    npukit_op* prepared = create(op, target, params, n_params);
    struct Destroy {
      npukit_op* p;
      ~Destroy() { delete p; }
    } destroy{prepared};
    run_named(prepared, tensors, n_tensors);
  });
  if (status == NPUKIT_OK) return status;
  // A call with several faults: report the one npukit_run has always reported first.
  const std::string prepared_error = last_error;
  const npukit_status first = guarded([&] { check_as_npukit_run(op, target, tensors, n_tensors, params, n_params); });
  if (first != NPUKIT_OK) return first;
  last_error = prepared_error;  // valid input, failed in the kernel
  return status;
}

NPUKIT_EXPORT npukit_op* npukit_op_create(const char* op, const char* target, const npukit_param* params,
                                          size_t n_params) {
  npukit_op* created = nullptr;
  npukit::guarded([&] { created = npukit::create(op, target, params, n_params); });
  return created;
}

NPUKIT_EXPORT npukit_op* npukit_op_create_like(const npukit_op* base, const npukit_param* params, size_t n_params) {
  npukit_op* created = nullptr;
  npukit::guarded([&] {
    if (base == nullptr) npukit::fail(npukit::Errc::invalid_argument, "base is NULL");
    created = new npukit_op(*base, npukit::param_texts(params, n_params));
  });
  return created;
}

NPUKIT_EXPORT npukit_status npukit_op_set_constant(npukit_op* op, const char* name, const DLTensor* tensor) {
  return npukit::guarded([&] {
    if (op == nullptr) npukit::fail(npukit::Errc::invalid_argument, "op is NULL");
    op->prepared.set_constant(name, tensor);
  });
}

NPUKIT_EXPORT npukit_status npukit_op_run(npukit_op* op, const npukit_tensor* tensors, size_t n_tensors) {
  return npukit::guarded([&] { npukit::run_named(op, tensors, n_tensors); });
}

NPUKIT_EXPORT npukit_status npukit_op_run_positional(npukit_op* op, const DLTensor* const* tensors, size_t n_tensors) {
  using namespace npukit;
  return guarded([&] {
    if (op == nullptr) fail(Errc::invalid_argument, "op is NULL");
    const OpSpec& spec = op->prepared.op();
    if (tensors == nullptr) fail(Errc::invalid_argument, "tensors is NULL");
    // Trailing optional inputs may be left out: an op that gains one at its end keeps its
    // callers' arrays valid (int8_gemm's a_scales).
    size_t required = spec.tensors.size();
    while (required > 0 && spec.tensors[required - 1].optional) --required;
    if (n_tensors < required || n_tensors > spec.tensors.size()) {
      const std::string list = join_names(spec.tensors, [](const TensorSpec& s) { return s.name; });
      fail(Errc::invalid_argument,
           "{}: n_tensors = {} but it takes {} tensors by position ({}; NULL for an absent optional one or a "
           "constant; trailing optional ones may be left out)",
           spec.name, n_tensors, spec.tensors.size(), list);
    }
    if (n_tensors == spec.tensors.size()) {
      op->prepared.run(tensors);
      return;
    }
    const DLTensor* all[PreparedOp::kMaxTensors] = {};  // the left-out ones NULL
    std::copy(tensors, tensors + n_tensors, all);
    op->prepared.run(all);
  });
}

NPUKIT_EXPORT void npukit_op_destroy(npukit_op* op) { delete op; }

NPUKIT_EXPORT const char* npukit_last_error(void) { return npukit::last_error.c_str(); }

NPUKIT_EXPORT size_t npukit_op_count(void) { return npukit::all_ops().size(); }

NPUKIT_EXPORT const char* npukit_op_name(size_t index) {
  const auto& ops = npukit::all_ops();
  return index < ops.size() ? ops[index]->name.c_str() : nullptr;
}

NPUKIT_EXPORT const npukit_op_info* npukit_op_describe(const char* op) {
  const npukit_op_info* info = nullptr;
  npukit::guarded([&] {
    if (op == nullptr) npukit::fail(npukit::Errc::invalid_argument, "op is NULL");
    info = npukit::describe(npukit::find_op(op));
  });
  return info;
}

// The project's version (CMakeLists.txt's project()), the one the package files carry.
NPUKIT_EXPORT npukit_status npukit_load_plugin(const char* path) {
  return npukit::guarded([&] {
    if (path == nullptr) npukit::fail(npukit::Errc::invalid_argument, "npukit_load_plugin: path is NULL");
    npukit::load_operator_plugin(path, "npukit_load_plugin");
  });
}

NPUKIT_EXPORT const char* npukit_cpu_model(void) {
  static const std::string model = npukit::cpu_model();
  return model.c_str();
}

NPUKIT_EXPORT const char* npukit_cpu_tier(const char* op) {
  const char* tier = nullptr;
  npukit::guarded([&] {
    if (op == nullptr) npukit::fail(npukit::Errc::invalid_argument, "npukit_cpu_tier: op is NULL");
    const npukit::OpSpec& spec = npukit::find_op(op);
    const std::string* t = npukit::dispatched_cpu_tier(spec);
    if (t == nullptr) {
      npukit::fail(npukit::Errc::unsupported, "npukit_cpu_tier: op {} has no CPU kernel this CPU runs (tiers: {})",
                   spec.name, spec.cpu_tiers.empty() ? std::string("none") : npukit::join_names(spec.cpu_tiers));
    }
    tier = t->c_str();
  });
  return tier;
}

NPUKIT_EXPORT const char* npukit_version(void) { return NPUKIT_VERSION; }

NPUKIT_EXPORT int npukit_abi_version(void) { return NPUKIT_ABI_VERSION; }

}  // extern "C"
