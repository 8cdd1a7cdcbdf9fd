#include <iostream>
#include <memory>

#include "golden/cases.h"
#include "runtime/cpu_features.h"
#include "runtime/registry.h"
#ifndef NPUKIT_NO_SIMULATOR
#include "schedules/npu/npu_schedule.h"
#endif
#include "tools/commands.h"
#include "tools/plugins.h"
#include "tools/gate/external_impl.h"
#include "tools/gate/gate_hooks.h"

namespace npukit::cli {
namespace {

std::string join(const std::vector<std::string>& v, const char* sep = ", ") {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

int list(const std::string& only, const std::vector<std::string>& plugins) {
  load_plugins(plugins);
  std::cout << "targets: " << join(all_targets()) << '\n';
  const CpuFeatures& f = cpu_features();
  std::cout << "cpu: " << describe(f) << '\n';
  std::cout << "input classes: " << join(golden::input_class_names()) << "\n\n";
  for (const OpSpec* op : all_ops()) {
    if (!only.empty() && op->name != only) continue;
    std::cout << op->name << ": " << op->summary << '\n';
    for (const TensorSpec& t : op->tensors) {
      std::vector<std::string> dtypes;
      for (DType d : t.dtypes) dtypes.emplace_back(dtype_name(d));
      const char* role = t.role == TensorSpec::Role::input ? "in  " : t.role == TensorSpec::Role::output ? "out " : "in/out ";
      std::cout << "  " << role << t.name << " ("
                << join(t.dims) << ") " << join(dtypes, "|")
                << (t.same_dtype_as.empty() ? "" : ", same dtype as " + t.same_dtype_as) << '\n';
    }
    for (const ParamSpec& p : op->params) {
      std::cout << "  param " << p.name << " = " << p.default_value;
      if (p.kind == ParamSpec::Kind::choice) std::cout << " {" << join(p.choices, "|") << "}";
      std::cout << ": " << p.doc << '\n';
    }
    std::cout << "  targets: " << join(kernel_families(*op));
    if (!op->cpu_tiers.empty()) std::cout << " (cpu tiers: " << join(op->cpu_tiers) << ")";
    std::cout << '\n';
#ifndef NPUKIT_NO_SIMULATOR
    if (const schedules::npu::NpuSchedule* npu = schedules::npu::find_npu_schedule(op->name)) {
      std::vector<std::string> knobs;
      for (const schedules::npu::Knob& k : npu->knobs) knobs.push_back(k.name);
      knobs.push_back("double_buffer");
      auto shape_text = [](const schedules::npu::Shape& s) {
        std::string t;
        for (const auto& [d, v] : s) t += (t.empty() ? "" : ",") + d + "=" + std::to_string(v);
        return t;
      };
      // A composite has no knobs of its own: its stages take their choosers' (npukit sim shows them).
      const std::string knob_text = npu->stages ? "composite (a sequence of stages, each its own schedule)"
                                                : "knobs " + join(knobs);
      std::cout << "  npu schedule: shape (" << join(npu->shape) << "), dtypes " << join(npu->dtypes) << ", "
                << knob_text << "; decode " << shape_text(npu->decode) << ", prefill " << shape_text(npu->prefill)
                << '\n';
    }
#endif
    if (const GateHooks* hooks = gate_hooks(op->name)) {
      std::vector<std::string> gated;
      for (DType d : hooks->dtypes) gated.emplace_back(dtype_name(d));
      std::cout << "  gated dtypes: " << join(gated) << '\n';
      std::cout << "  NaN/Inf: " << hooks->nan_contract << '\n';
    }
    // Only for one op: the signature of a kernel `gate --impl` gates for it.
    if (!only.empty()) std::cout << "  external kernel (npukit/external_kernel.h): " << gate::external_signature(*op);
    std::cout << '\n';
  }
  return 0;
}

}  // namespace

void add_list(CLI::App& app, int& exit_code) {
  auto only = std::make_shared<std::string>();
  auto plugins = std::make_shared<std::vector<std::string>>();
  CLI::App* sub = app.add_subcommand("list", "list ops, targets, dtypes and input classes");
  sub->add_option("--op", *only, "describe only this op");
  add_plugin_option(sub, *plugins);
  sub->callback([only, plugins, &exit_code] { exit_code = list(*only, *plugins); });
}

}  // namespace npukit::cli
