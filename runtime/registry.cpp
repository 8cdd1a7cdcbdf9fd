#include "runtime/registry.h"

#include <algorithm>
#include <mutex>

#include "npukit/operator_list.h"  // generated: NPUKIT_OPERATORS(X), one X(op) per operator
#include "runtime/cpu_features.h"
#include "runtime/cpu_variant.h"
#include "runtime/error.h"
#include "runtime/text.h"

namespace npukit {

#define NPUKIT_DECLARE(op) const OpSpec& op##_spec();
NPUKIT_OPERATORS(NPUKIT_DECLARE)
#undef NPUKIT_DECLARE

namespace {

// The built-in ops, then those registered at run time (operator plug-ins), in that order.
std::vector<const OpSpec*>& op_table() {
  static std::vector<const OpSpec*> ops = [] {
    std::vector<const OpSpec*> v;
#define NPUKIT_LIST(op) v.push_back(&op##_spec());
    NPUKIT_OPERATORS(NPUKIT_LIST)
#undef NPUKIT_LIST
    return v;
  }();
  return ops;
}

}  // namespace

const std::vector<const OpSpec*>& all_ops() { return op_table(); }

void register_op(const OpSpec& op) {
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  std::vector<const OpSpec*>& ops = op_table();
  for (const OpSpec* o : ops) {
    if (o == &op) return;
    if (o->name == op.name) fail(Errc::invalid_argument, "op '{}' is already registered: op names must be unique", op.name);
  }
  ops.push_back(&op);
}

const OpSpec& find_op(const std::string& name) {
  for (const OpSpec* op : all_ops()) {
    if (op->name == name) return *op;
  }
  const std::string list = join_names(all_ops(), [](const OpSpec* op) { return op->name; });
  fail(Errc::invalid_argument, "unknown op '{}' (known: {})", name, list);
}

namespace {

struct Registered {
  std::mutex mutex;
  std::map<std::pair<std::string, std::string>, KernelFn> kernels;  // (op, family)
  std::vector<std::string> targets;
};

Registered& registered() {
  static Registered r;
  return r;
}

}  // namespace

void register_kernel(const std::string& op, const std::string& family, KernelFn fn,
                     const std::vector<std::string>& targets) {
  Registered& r = registered();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.kernels[{op, family}] = std::move(fn);
  for (const std::string& t : targets) {
    if (std::find(r.targets.begin(), r.targets.end(), t) == r.targets.end()) r.targets.push_back(t);
  }
}

const KernelFn* find_kernel(const OpSpec& op, const std::string& family) {
  if (auto it = find_name(op.kernels, family); it != op.kernels.end()) return &it->second;
  Registered& r = registered();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.kernels.find({op.name, family});
  return it == r.kernels.end() ? nullptr : &it->second;
}

const std::string* dispatched_cpu_tier(const OpSpec& op, std::string_view forced) {
  const int cap = tier_rank(forced);
  for (const std::string& t : op.cpu_tiers) {
    if (tier_dispatchable(t, forced, cap)) return &t;
  }
  return nullptr;
}

std::vector<std::string> kernel_families(const OpSpec& op) {
  std::vector<std::string> out;
  for (const auto& [family, fn] : op.kernels) out.push_back(family);
  Registered& r = registered();
  std::lock_guard<std::mutex> lock(r.mutex);
  for (const auto& [key, fn] : r.kernels) {
    if (key.first == op.name) out.push_back(key.second);
  }
  return out;
}

std::vector<std::string> all_targets() {
  std::vector<std::string> families, tiers;
  for (const OpSpec* op : all_ops()) {
    for (const auto& [family, kernel] : op->kernels) {
      if (std::find(families.begin(), families.end(), family) == families.end()) families.push_back(family);
    }
    for (const std::string& t : op->cpu_tiers) {
      if (std::find(tiers.begin(), tiers.end(), "cpu:" + t) == tiers.end()) tiers.push_back("cpu:" + t);
    }
  }
  families.insert(families.end(), tiers.begin(), tiers.end());
  Registered& r = registered();
  std::lock_guard<std::mutex> lock(r.mutex);
  families.insert(families.end(), r.targets.begin(), r.targets.end());
  return families;
}

}  // namespace npukit
