// `npukit sim`: analyse an op's NPU schedule for one shape on one architecture, check the
// rules, estimate its cycles and write the reports. Without --op (or with --all), every op
// that has an NPU schedule at its decode and prefill shapes, as one summary table (what
// the main job prints).
#include <cerrno>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "runtime/error.h"
#include "schedules/npu/npu_schedule.h"
#include "simulator/analysis/op_simulation.h"
#include "simulator/report/json_report.h"
#include "simulator/report/roofline_svg.h"
#include "simulator/report/table.h"
#include "simulator/report/trace.h"
#include "simulator/simulate.h"
#include "tools/cli_args.h"
#include "tools/commands.h"
#include "tools/plugins.h"
#include "tools/sim_helpers.h"

namespace npukit::cli {
namespace {

struct SimArgs {
  std::string arch = "edge-6tops", op, shape, dtype, schedule, format = "table", trace, roofline, nest;
  std::vector<std::string> params, plugins;
  bool strict = false, all = false;
};

// Every op with an NPU schedule, each dtype, at its decode and prefill shapes: one table,
// or {"arch", "ops": [...]} in JSON.
int run_all(const SimArgs& a, const sim::ArchSpec& arch) {
  int code = 0;
  nlohmann::json ops = nlohmann::json::array();
  sim::SummaryTable table;
  for (const schedules::npu::NpuSchedule& s : schedules::npu::npu_schedules()) {
    for (const std::string& dtype : s.dtypes) {
      for (const auto& [phase, shape] : {std::pair{"decode", s.decode}, std::pair{"prefill", s.prefill}}) {
        sim::SimRequest r;
        r.op = s.op;
        r.shape = shape;
        r.dtype = dtype;
        if (s.stages) {  // a composite: its total row
          const sim::StagedResult res = simulate_staged_request(r, arch, a.strict);
          code = std::max(code, has_rule_errors(res.total));
          if (a.format == "table") {
            table.add(res);
          } else {
            nlohmann::json j = sim::to_json(res);
            j["phase"] = phase;
            ops.push_back(std::move(j));
          }
          continue;
        }
        const sim::SimResult res = simulate_request(r, arch, a.strict);
        code = std::max(code, has_rule_errors(res));
        if (a.format == "table") {
          table.add(res);
        } else {
          nlohmann::json j = sim::to_json(res);
          j["phase"] = phase;
          ops.push_back(std::move(j));
        }
      }
    }
  }
  if (a.format == "table") std::cout << "npu-sim " << arch.name << "\n" << table.str();
  if (a.format == "json") std::cout << nlohmann::json{{"arch", arch.name}, {"ops", ops}}.dump(2) << '\n';
  return code;
}

int run_sim(const SimArgs& a) {
  load_plugins(a.plugins);
  if (a.format != "table" && a.format != "json")
    fail(Errc::invalid_argument, "--format {}: must be table or json", a.format);
  const sim::ArchSpec arch = arch_argument(a.arch);
  if (a.all || a.op.empty()) {
    if (!a.op.empty()) fail(Errc::invalid_argument, "--all and --op {}: give one of them", a.op);
    if (!a.shape.empty() || !a.trace.empty() || !a.roofline.empty() || !a.nest.empty() || !a.params.empty() ||
        !a.schedule.empty() || !a.dtype.empty())
      fail(Errc::invalid_argument, "--shape, --dtype, --param, --schedule, --trace, --roofline and --nest need --op");
    return run_all(a, arch);
  }
  sim::SimRequest r;
  r.op = a.op;
  r.shape = integer_assignments(a.shape, "--shape");
  r.dtype = a.dtype;
  r.params = assignment_map(a.params, "--param");
  r.schedule = integer_assignments(schedule_argument(a.schedule), "--schedule");
  if (sim::is_composite(r.op)) {
    // One row per stage and the total; the per-unit reports belong to a stage's own op.
    for (const auto& [flag, value] : {std::pair{"--trace", a.trace}, std::pair{"--roofline", a.roofline},
                                      std::pair{"--nest", a.nest}}) {
      if (!value.empty())
        fail(Errc::invalid_argument,
             "{} {}: {} is a composite schedule (a sequence of stages); give a stage's op instead", flag, value, r.op);
    }
    const sim::StagedResult res = simulate_staged_request(r, arch, a.strict);
    if (a.format == "table") {
      std::cout << sim::format_stages(res);
    } else {
      std::cout << sim::to_json(res).dump(2) << '\n';
    }
    return has_rule_errors(res.total);
  }
  // Files first: a path that cannot be written is a usage error, before any report.
  auto write = [](const char* flag, const std::string& path, const std::function<void()>& fn) {
    if (path.empty()) return;
    try {
      fn();
    } catch (const std::exception& e) {
      fail(Errc::invalid_argument, "{} {}: {}", flag, path, e.what());
    }
  };
  // The nest before the analysis: it is what an author reads when the analysis fails.
  write("--nest", a.nest, [&] {
    std::ofstream f(a.nest);
    f << sim::lowered_nest_text(r, arch);
    f.close();
    if (!f) throw std::runtime_error(message("cannot write ({})", std::strerror(errno)));
  });
  const sim::SimResult res = simulate_request(r, arch, a.strict);
  write("--trace", a.trace, [&] { sim::write_trace(res, a.trace); });
  write("--roofline", a.roofline, [&] { sim::write_roofline_svg(res, a.roofline); });
  if (a.format == "table") {
    std::cout << sim::format_table(res);
  } else {
    std::cout << sim::to_json(res).dump(2) << '\n';
  }
  return has_rule_errors(res);
}

}  // namespace

void add_sim(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<SimArgs>();
  CLI::App* sub = app.add_subcommand("sim", "simulate an op's NPU schedule on an architecture");
  sub->add_option("--arch", args->arch, "a preset (npukit list) or an arch .yaml file (default: edge-6tops)");
  sub->add_option("--op", args->op, "the op; without it (or with --all), every op with an NPU schedule at its decode and prefill shapes");
  sub->add_flag("--all", args->all, "every op with an NPU schedule, each dtype, at its decode and prefill shapes, in one table");
  sub->add_option("--shape", args->shape, "named dims, e.g. M=1,K=4096,N=4096 (int8_gemm); default: the op's decode shape");
  sub->add_option("--dtype", args->dtype, "operand dtype (default: the schedule's first; npukit list --op shows them)");
  sub->add_option("--param", args->params, "NAME=VALUE for an op parameter, as in npukit run (e.g. out=int8)");
  sub->add_option("--schedule", args->schedule, "override schedule knobs, e.g. tile_n=256,tile_k=1024,double_buffer=0, or @FILE (npukit tune --emit)");
  sub->add_option("--format", args->format, "table (default) or json");
  sub->add_option("--trace", args->trace, "write a Chrome/Perfetto trace (one track per unit)");
  sub->add_option("--roofline", args->roofline, "write an SVG roofline");
  sub->add_option("--nest", args->nest, "write the lowered loop nest the analysis read (Halide's syntax)");
  sub->add_flag("--strict", args->strict, "warnings (e.g. padding waste) become errors");
  add_plugin_option(sub, args->plugins);
  sub->callback([args, &exit_code] { exit_code = run_sim(*args); });
}

}  // namespace npukit::cli
