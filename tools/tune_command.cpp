// `npukit tune`: search an op's NPU schedule knobs for the fastest settings that break no
// rule, print the best few beside the hand-written default, optionally write the winner in
// the form `npukit sim --schedule @FILE` and `npukit gate --schedule @FILE` read.
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "runtime/error.h"
#include "simulator/analysis/tuner.h"
#include "simulator/report/table.h"
#include "tools/cli_args.h"
#include "tools/commands.h"
#include "tools/plugins.h"
#include "tools/sim_helpers.h"

namespace npukit::cli {
namespace {

struct TuneArgs {
  std::vector<std::string> plugins;
  std::string arch = "edge-6tops", op, shape, dtype, format = "table", emit;
  std::vector<std::string> params;
  int64_t top = 5;
  double budget_s = 10;
  bool strict = false;
};

std::string knob_text(const schedules::npu::Knobs& k) {
  std::string s;
  for (const auto& [name, value] : k) s += (s.empty() ? "" : ",") + name + "=" + std::to_string(value);
  return s;
}

nlohmann::json candidate_json(const sim::TuneCandidate& c) {
  const sim::CostReport& r = c.result.cost;
  return {{"knobs", c.knobs},
          {"total_cycles", r.total_cycles},
          {"time_us", r.time_us},
          {"bound", sim::to_string(r.bound)},
          {"busiest_unit", sim::to_string(r.busiest())},
          {"utilization", r.util(r.busiest())},
          {"dram_bytes", c.result.analysis.dram_bytes()}};
}

std::string row(const std::string& label, const sim::TuneCandidate& c, int64_t best_cycles) {
  const sim::CostReport& r = c.result.cost;
  return fmt::format("{:<9}{:>14}{:>8.3f}  {:<10}{:<8}{:>6.1f}%  {}\n", label, r.total_cycles,
                     double(r.total_cycles) / double(std::max<int64_t>(1, best_cycles)), sim::to_string(r.bound),
                     sim::to_string(r.busiest()), 100.0 * r.util(r.busiest()), knob_text(c.knobs));
}

int run_tune(const TuneArgs& a) {
  load_plugins(a.plugins);
  if (a.op.empty()) fail(Errc::invalid_argument, "--op: required");
  if (a.format != "table" && a.format != "json")
    fail(Errc::invalid_argument, "--format {}: must be table or json", a.format);
  if (a.top < 1) fail(Errc::invalid_argument, "--top {}: must be at least 1", a.top);
  if (!(a.budget_s > 0 && a.budget_s <= 3600))
    fail(Errc::invalid_argument, "--budget-s " + std::to_string(a.budget_s) + ": must be in (0, 3600]");
  const sim::ArchSpec arch = arch_argument(a.arch);
  sim::SimRequest r;
  r.op = a.op;
  r.shape = integer_assignments(a.shape, "--shape");
  r.dtype = a.dtype;
  r.params = assignment_map(a.params, "--param");
  sim::TuneOptions options;
  options.budget_s = a.budget_s;
  options.strict = a.strict;
  sim::TuneResult t;
  try {
    t = sim::tune(r, arch, options);
  } catch (const std::invalid_argument& e) {
    fail(Errc::invalid_argument, e.what());
  }
  if (t.valid.empty()) {
    std::cerr << "npukit tune: no setting of " << a.op << "'s knobs breaks no rule on " << arch.name << " (" << t.evaluated
              << " evaluated)\n";
  }
  if (!a.emit.empty() && !t.valid.empty()) {
    std::ofstream f(a.emit);
    f << knob_text(t.valid.front().knobs) << '\n';
    f.close();
    if (!f) fail(Errc::invalid_argument, "--emit " + a.emit + ": cannot write");
  }
  const int64_t best = t.valid.empty() ? 0 : t.valid.front().result.cost.total_cycles;
  const size_t n = std::min<size_t>(t.valid.size(), static_cast<size_t>(a.top));
  if (a.format == "json") {
    nlohmann::json cands = nlohmann::json::array();
    for (size_t i = 0; i < n; ++i) cands.push_back(candidate_json(t.valid[i]));
    nlohmann::json def = candidate_json(t.best_default);
    def["valid"] = t.default_valid;
    std::cout << nlohmann::json{{"op", a.op},
                                {"arch", arch.name},
                                {"shape", t.request.shape},
                                {"dtype", t.request.dtype},
                                {"variant", t.request.variant},
                                {"candidates", cands},
                                {"default", def},
                                {"evaluated", t.evaluated},
                                {"rejected", t.rejected},
                                {"seconds", t.seconds}}
                     .dump(2)
              << '\n';
  } else {
    std::cout << "npukit tune " << a.op << " (" << t.request.variant << ") " << sim::format_shape(t.best_default.result.analysis)
              << " on " << arch.name << "\n";
    std::cout << fmt::format("{:<9}{:>14}{:>8}  {:<10}{:<8}{:>7}  knobs\n", "rank", "cycles", "x best", "bound",
                             "busiest", "util");
    for (size_t i = 0; i < n; ++i) std::cout << row(fmt::format("#{}", i + 1), t.valid[i], best);
    std::cout << row(t.default_valid ? "default" : "default!", t.best_default, best);
    if (!t.default_valid) std::cout << "  (the default breaks a rule)\n";
    std::cout << fmt::format("evaluated {} settings in {:.2f} s", t.evaluated, t.seconds);
    if (!t.rejected.empty()) {
      std::cout << "; rejected by";
      for (const auto& [rule, count] : t.rejected) std::cout << " " << rule << " " << count;
    }
    std::cout << "\n";
  }
  return t.valid.empty() ? 1 : 0;
}

}  // namespace

void add_tune(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<TuneArgs>();
  CLI::App* sub = app.add_subcommand("tune", "search an op's NPU schedule knobs for the fewest simulated cycles");
  sub->add_option("--arch", args->arch, "a preset or an arch .yaml file (default: edge-6tops)");
  sub->add_option("--op", args->op, "the op (one with an NPU schedule)");
  sub->add_option("--shape", args->shape, "named dims, e.g. M=1,K=4096,N=4096; default: the op's decode shape");
  sub->add_option("--dtype", args->dtype, "operand dtype (default: the schedule's first)");
  sub->add_option("--param", args->params, "NAME=VALUE for an op parameter, as in npukit run");
  sub->add_option("--top", args->top, "how many of the best settings to print (default 5)");
  sub->add_option("--budget-s", args->budget_s, "wall-clock budget of the search in seconds (default 10)");
  sub->add_option("--format", args->format, "table (default) or json");
  sub->add_flag("--strict", args->strict, "warnings (padding, partial bursts) reject a setting too, as in sim --strict");
  sub->add_option("--emit", args->emit, "write the best knobs for npukit sim/gate --schedule @FILE");
  add_plugin_option(sub, args->plugins);
  sub->callback([args, &exit_code] { exit_code = run_tune(*args); });
}

}  // namespace npukit::cli
