#include <fstream>
#include <iostream>
#include <memory>

#include "golden/cases.h"
#include "runtime/error.h"
#include "runtime/text.h"
#include "runtime/registry.h"
#ifndef NPUKIT_NO_SIMULATOR
#include "simulator/analysis/npu_sim_kernels.h"
#endif
#include "tools/cli_args.h"
#include "tools/commands.h"
#include "tools/plugins.h"
#include "tools/gate/external_impl.h"
#include "tools/gate/reports.h"
#include "tools/gate/result_json.h"
#include "tools/gate/shell_word.h"

namespace npukit::cli {
namespace {

struct GateArgs {
  gate::Options options;
  std::string json, junit, report, baseline, schedule, impl, target_name;
  std::vector<std::string> plugins;
  bool no_isolate = false, verbose = false;
};

void check_known(const std::vector<std::string>& given, const std::vector<std::string>& known, const char* flag) {
  const std::string list = join_names(known);
  for (const auto& g : given) {
    bool ok = false;
    for (const auto& k : known) ok = ok || k == g;
    if (!ok) fail(Errc::invalid_argument, "{} {}: unknown (known: {})", flag, g, list);
  }
}

void write_file(const std::string& path, const std::function<void(std::ostream&)>& fn) {
  std::ofstream out(path);
  if (!out) fail(Errc::invalid_argument, "cannot write {}", path);
  fn(out);
  out.close();  // a small report reaches the file only here: /dev/full fails at the flush
  if (!out) fail(Errc::invalid_argument, "error while writing {}", path);
}

int run_gate(const GateArgs& a) {
  const std::map<std::string, std::string> op_flags = load_plugins(a.plugins);
  std::vector<std::string> op_names;
  for (const OpSpec* op : all_ops()) op_names.push_back(op->name);
  check_known(a.options.ops, op_names, "--op");
  // npu-sim takes any arch file as well as the presets; its kernels resolve it.
  std::vector<std::string> targets;
  for (const std::string& t : a.options.targets) {
    if (t.rfind("npu-sim:", 0) != 0) targets.push_back(t);
  }
  check_known(targets, all_targets(), "--target");
  check_known(a.options.classes, golden::input_class_names(), "--class");
  std::vector<std::string> dtype_names;
  for (DType t : kAllDTypes) dtype_names.emplace_back(dtype_name(t));
  check_known(a.options.dtypes, dtype_names, "--dtype");

  if (!a.schedule.empty()) {
#ifdef NPUKIT_NO_SIMULATOR
    fail(Errc::invalid_argument, "--schedule {}: this build has no npu-sim targets", a.schedule);
#else
    if (a.options.ops.size() != 1)
      fail(Errc::invalid_argument, "--schedule {}: needs exactly one --op (knobs belong to one op's NPU schedule)",
           a.schedule);
    try {
      sim::set_npu_schedule_override(a.options.ops.front(), integer_assignments(schedule_argument(a.schedule), "--schedule"));
    } catch (const std::invalid_argument& e) {
      fail(Errc::invalid_argument, "--schedule: {}", e.what());
    }
#endif
  }
  if (!a.baseline.empty()) {
    std::vector<gate::CaseResult> none;
    gate::apply_baseline(none, a.baseline);  // reject an unreadable baseline before the long run
  }
  gate::Options options = a.options;
  options.isolate = !a.no_isolate;
  options.op_flags = op_flags;
  if (!a.impl.empty()) {
    if (options.ops.size() != 1)
      fail(Errc::invalid_argument, "--impl {}: needs exactly one --op (the op whose signature the kernel has)", a.impl);
    std::string name;
    try {
      name = gate::register_external_kernel(find_op(options.ops.front()), a.impl, a.target_name);
    } catch (const gate::ExternalLoadCrash& e) {
      std::cerr << "npukit: " << e.what() << '\n';
      return 3;  // as a kernel that crashes (docs/gating.md, exit codes)
    }
    options.targets.push_back(name);  // without --target, the external kernel alone
    options.target_flags[name] = "--impl " + gate::shell_word(a.impl) + " --target-name " + name;
  } else if (!a.target_name.empty()) {
    fail(Errc::invalid_argument, "--target-name {}: names the kernel of --impl, which is missing", a.target_name);
  }
  std::vector<gate::CaseResult> results = gate::run(all_ops(), options);
  if (!a.baseline.empty()) gate::apply_baseline(results, a.baseline);

  if (a.verbose) {
    gate::print_table(std::cout, results);
  } else {
    gate::print_matrix(std::cout, results);
  }
  if (!a.json.empty()) write_file(a.json, [&](std::ostream& os) { os << gate::report_json(results).dump(2) << '\n'; });
  if (!a.junit.empty()) write_file(a.junit, [&](std::ostream& os) { gate::write_junit(os, results); });
  if (!a.report.empty()) write_file(a.report, [&](std::ostream& os) { gate::write_html(os, results); });
  const int code = gate::exit_code(results);
  if (code == 3) return code;
  const std::vector<std::string> unrunnable = gate::unrunnable_requests(results, options);
  if (!unrunnable.empty()) {
    std::string line = unrunnable.front();
    for (size_t i = 1; i < unrunnable.size(); ++i) line += "; " + unrunnable[i];
    fail(Errc::unsupported, "gate: {}: nothing was checked", line);
  }
  const std::vector<std::string> unwritten = gate::unwritten_goldens(results);
  if (!unwritten.empty()) {
    std::string line = unwritten.front();
    for (size_t i = 1; i < unwritten.size(); ++i) line += "; " + unwritten[i];
    fail(Errc::invalid_argument, "gate: {}: write it, then gate again; nothing of the op was checked", line);
  }
  return code;
}

}  // namespace

void add_gate(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<GateArgs>();
  CLI::App* sub = app.add_subcommand("gate", "check every op x target x input class against its golden reference");
  sub->add_option("--op", args->options.ops, "ops to gate (default: all)");
  sub->add_option("--target", args->options.targets, "targets: cpu, cpu:<tier>, gpu-opencl, gpu-cuda, npu-sim:<preset or arch.yaml> (default: cpu)");
  sub->add_option("--class", args->options.classes, "input classes (default: all)");
  sub->add_option("--dtype", args->options.dtypes, "storage dtypes (default: each op's)");
  sub->add_option("--case", args->options.case_index, "run only this case index of each class (for repro)");
  sub->add_option("--repeat", args->options.repeat,
                  "run each case N times, alternately on 1 and 2 Halide threads; NONDETERMINISTIC unless all write the same bytes")
      ->check(CLI::Range(1, 1000));
  sub->add_option("--json", args->json, "write every metric and the worst points as JSON");
  sub->add_option("--junit", args->junit, "write JUnit XML (one suite per op)");
  sub->add_option("--report", args->report, "write one self-contained HTML page: the matrix, per-class detail, failing cases");
  sub->add_flag("--verbose", args->verbose, "print one row per case instead of the op x dtype x target matrix");
  sub->add_option("--baseline", args->baseline, "fail cases whose metrics regressed against this --json report");
  sub->add_option("--schedule", args->schedule,
                  "NPU schedule knobs for the npu-sim targets of the one --op, e.g. tile_n=256,double_buffer=0, or @FILE (npukit tune --emit)");
  sub->add_option("--impl", args->impl,
                  "gate a kernel npukit did not build: LIB.so:SYMBOL with the op's signature (include/npukit/external_kernel.h; npukit list --op OP)");
  sub->add_option("--target-name", args->target_name, "the target name --impl's kernel gets in the reports (default: SYMBOL)");
  add_plugin_option(sub, args->plugins);
  sub->add_flag("--no-isolate", args->no_isolate, "run kernels in this process (no crash isolation; for debuggers)");
  sub->callback([args, &exit_code] { exit_code = run_gate(*args); });
}

}  // namespace npukit::cli
