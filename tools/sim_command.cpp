// `npukit sim`: analyse an op's NPU schedule for one shape on one architecture, check the
// rules, estimate its cycles and write the reports. Without --op, every op that has an NPU
// schedule at its default shape, as one summary table (what the main job prints).
#include <cerrno>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "runtime/error.h"
#include "simulator/analysis/op_simulation.h"
#include "simulator/report/json_report.h"
#include "simulator/report/roofline_svg.h"
#include "simulator/report/table.h"
#include "simulator/report/trace.h"
#include "simulator/simulate.h"
#include "tools/commands.h"

namespace npukit::cli {
namespace {

struct SimArgs {
  std::string arch = "edge-6tops", op, shape, dtype, out = "int32", schedule, format = "table", trace, roofline, nest;
  bool strict = false, out_given = false;
};

// "M=1,K=4096,N=4096" → {M: 1, K: 4096, N: 4096}; `flag` names the option in errors.
std::map<std::string, int64_t> parse_assignments(const std::string& text, const char* flag) {
  std::map<std::string, int64_t> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    const size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0) fail(Errc::invalid_argument, std::string(flag) + " " + item + ": expected NAME=INTEGER");
    const std::string name = item.substr(0, eq), value = item.substr(eq + 1);
    size_t used = 0;
    int64_t v = 0;
    try {
      v = std::stoll(value, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != value.size()) fail(Errc::invalid_argument, std::string(flag) + " " + item + ": " + value + " is not an integer");
    if (!out.emplace(name, v).second) fail(Errc::invalid_argument, std::string(flag) + " " + name + " given twice");
  }
  return out;
}

sim::ArchSpec arch_of(const std::string& name) {
  try {
    return sim::resolve_arch(name);
  } catch (const std::exception& e) {
    fail(Errc::invalid_argument, std::string("--arch: ") + e.what());
  }
}

sim::SimResult simulate_one(const sim::SimRequest& r, const sim::ArchSpec& arch, bool strict) {
  try {
    return sim::simulate(sim::analyse_op(r, arch), arch, strict);
  } catch (const std::invalid_argument& e) {
    fail(Errc::invalid_argument, e.what());
  }
}

int has_errors(const sim::SimResult& r) {
  for (const sim::Violation& v : r.violations)
    if (v.severity == sim::Violation::error) return 1;
  return 0;
}

int run_summary(const SimArgs& a, const sim::ArchSpec& arch) {
  int code = 0;
  nlohmann::json all = nlohmann::json::array();
  if (a.format == "table") std::cout << "npu-sim " << arch.name << "\n" << sim::format_summary_header();
  for (const sim::SimulatedOp& op : sim::simulated_ops()) {
    for (const std::string& dtype : op.dtypes) {
      sim::SimRequest r;
      r.op = op.op;
      r.shape = op.default_shape;
      r.dtype = dtype;
      const sim::SimResult res = simulate_one(r, arch, a.strict);
      code = std::max(code, has_errors(res));
      if (a.format == "table") {
        std::cout << sim::format_summary_row(res);
      } else {
        all.push_back(sim::to_json(res));
      }
    }
  }
  if (a.format == "json") std::cout << all.dump(2) << '\n';
  return code;
}

int run_sim(const SimArgs& a) {
  if (a.format != "table" && a.format != "json") fail(Errc::invalid_argument, "--format " + a.format + ": must be table or json");
  const sim::ArchSpec arch = arch_of(a.arch);
  if (a.op.empty()) {
    if (!a.shape.empty() || !a.trace.empty() || !a.roofline.empty() || !a.nest.empty())
      fail(Errc::invalid_argument, "--shape, --trace, --roofline and --nest need --op");
    return run_summary(a, arch);
  }
  if (a.op != "int8_gemm" && a.out_given) fail(Errc::invalid_argument, "--out " + a.out + ": only int8_gemm has output stages");
  sim::SimRequest r;
  r.op = a.op;
  r.shape = parse_assignments(a.shape, "--shape");
  r.dtype = a.dtype;
  r.out = a.out;
  if (!a.schedule.empty()) r.schedule = parse_assignments(a.schedule, "--schedule");
  const sim::SimResult res = simulate_one(r, arch, a.strict);
  // Files first: a path that cannot be written is a usage error, before any report.
  auto write = [](const char* flag, const std::string& path, const std::function<void()>& fn) {
    if (path.empty()) return;
    try {
      fn();
    } catch (const std::exception& e) {
      fail(Errc::invalid_argument, std::string(flag) + " " + path + ": " + e.what());
    }
  };
  write("--trace", a.trace, [&] { sim::write_trace(res, a.trace); });
  write("--roofline", a.roofline, [&] { sim::write_roofline_svg(res, a.roofline); });
  write("--nest", a.nest, [&] {
    std::ofstream f(a.nest);
    f << sim::lowered_nest_text(r, arch);
    if (!f) throw std::runtime_error(std::string("cannot write (") + std::strerror(errno) + ")");
  });
  if (a.format == "table") {
    std::cout << sim::format_table(res);
  } else {
    std::cout << sim::to_json(res).dump(2) << '\n';
  }
  return has_errors(res);
}

}  // namespace

void add_sim(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<SimArgs>();
  CLI::App* sub = app.add_subcommand("sim", "simulate an op's NPU schedule on an architecture");
  sub->add_option("--arch", args->arch, "a preset (npukit list) or an arch .yaml file (default: edge-6tops)");
  sub->add_option("--op", args->op, "the op; without it, every op with an NPU schedule at its default shape");
  sub->add_option("--shape", args->shape, "named dims, e.g. M=1,K=4096,N=4096 (int8_gemm), rows=16,hidden=4096 (rms_norm)");
  sub->add_option("--dtype", args->dtype, "operand dtype (int8_gemm: int8; rms_norm: float16 or float32)");
  sub->add_option("--out", args->out, "int8_gemm output stage: int32 (default), int8, int8_float, float32, float16")
      ->each([args](const std::string&) { args->out_given = true; });
  sub->add_option("--schedule", args->schedule, "override schedule knobs, e.g. tile_n=256,tile_k=1024,double_buffer=0");
  sub->add_option("--format", args->format, "table (default) or json");
  sub->add_option("--trace", args->trace, "write a Chrome/Perfetto trace (one track per unit)");
  sub->add_option("--roofline", args->roofline, "write an SVG roofline");
  sub->add_option("--nest", args->nest, "write the lowered loop nest the analysis read (Halide's syntax)");
  sub->add_flag("--strict", args->strict, "warnings (e.g. padding waste) become errors");
  sub->callback([args, &exit_code] { exit_code = run_sim(*args); });
}

}  // namespace npukit::cli
