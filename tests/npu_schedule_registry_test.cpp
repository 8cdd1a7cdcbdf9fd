// Every registered NPU schedule, through the registration alone (no op names here): its
// chooser never picks knobs the capacity rule rejects where any fit (they count through
// one footprint function), its default decode and prefill shapes are strict-clean on every preset or
// refused by a rule that says the hardware lacks what it needs, and the tuner never does
// worse than the default. A composite schedule (NpuSchedule::stages) is checked through
// its stages: every stage's chooser, every stage's rules; it has no knobs to tune.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "schedules/npu/npu_schedule.h"
#include "simulator/analysis/op_simulation.h"
#include "simulator/analysis/stage_simulation.h"
#include "simulator/analysis/tuner.h"
#include "simulator/simulate.h"

namespace npukit::sim {
namespace {

using schedules::npu::NpuSchedule;
using schedules::npu::npu_schedules;

std::string shape_text(const std::map<std::string, int64_t>& m) {
  std::string out;
  for (const auto& [k, v] : m) out += " " + k + "=" + std::to_string(v);
  return out;
}

// A random shape around the schedule's defaults: each dim its decode or prefill value, or
// a random extent up to twice the larger (shapes the op's rules refuse are skipped).
SimRequest random_request(const NpuSchedule& s, std::mt19937_64& rng) {
  SimRequest r;
  r.op = s.op;
  r.dtype = s.dtypes[rng() % s.dtypes.size()];
  for (const std::string& d : s.shape) {
    const int64_t a = s.decode.at(d), b = s.prefill.at(d);
    switch (rng() % 3) {
      case 0: r.shape[d] = a; break;
      case 1: r.shape[d] = b; break;
      default: r.shape[d] = 1 + static_cast<int64_t>(rng() % static_cast<uint64_t>(2 * std::max(a, b)));
    }
  }
  return r;
}

bool breaks_capacity(const OpAnalysis& a, const ArchSpec& arch) {
  for (const Violation& v : check_rules(a, arch, false))
    if (v.rule == "buffer_capacity") return true;
  return false;
}

// Whether the shape fits the arch at all: its smallest tiles (every knob at its minimum,
// single-buffered) pass the capacity rule. A shape that does not (a row too wide for the
// smallest buffer of a preset to hold the few copies the schedule needs) leaves the
// chooser nothing to choose; the rule saying so is right.
bool fits_at_all(const NpuSchedule& s, SimRequest r, const ArchSpec& arch) {
  r.schedule = {{"double_buffer", 0}};
  for (const auto& k : s.knobs) r.schedule[k.name] = k.min;
  try {
    return !breaks_capacity(analyse_op(r, arch), arch);
  } catch (const std::invalid_argument&) {
    return true;  // too many tiles to tell: count the chooser's pick against it
  }
}

// Every declared operator with a schedules/npu/<op>.cpp (NPUKIT_NPU_OPERATOR_NAMES,
// tests/npu_sim.cmake) is registered under its name, and only those.
TEST(NpuSchedules, EveryOpWithAnNpuScheduleIsRegistered) {
  std::vector<std::string> declared, registered;
  std::stringstream names(NPUKIT_NPU_OPERATOR_NAMES);
  for (std::string name; std::getline(names, name, ',');) declared.push_back(name);
  for (const NpuSchedule& s : npu_schedules()) registered.push_back(s.op);
  std::sort(declared.begin(), declared.end());
  EXPECT_EQ(registered, declared);  // npu_schedules() is sorted by op name
  for (const std::string& op : declared) {
    ASSERT_NE(schedules::npu::find_npu_schedule(op), nullptr) << op;
    EXPECT_FALSE(schedules::npu::find_npu_schedule(op)->stage_only) << op;
  }
}

TEST(NpuSchedules, ChosenKnobsPassTheCapacityRule) {
  std::mt19937_64 rng(11);
  ASSERT_GE(npu_schedules().size(), 2u);
  for (const NpuSchedule& s : npu_schedules()) {
    // A composite's stages are registered ops, checked here on their own random shapes, and
    // stage-only pipelines, checked at the composite's defaults below and in
    // qkv_attention_npu_test; random composite shapes take minutes (each is every stage).
    if (s.stages) continue;
    int analysed = 0;
    for (const std::string& name : preset_names()) {
      const ArchSpec& arch = preset(name);
      for (int i = 0; i < 10; ++i) {
        const SimRequest r = random_request(s, rng);
        std::vector<Violation> found;
        std::string knobs;
        try {
          const OpAnalysis a = analyse_op(r, arch);
          if (breaks_capacity(a, arch) && !fits_at_all(s, r, arch)) continue;
          found = check_rules(a, arch, false);
          knobs = shape_text(a.schedule);
        } catch (const std::invalid_argument&) {
          continue;  // a shape the op refuses, or too many tiles to walk
        }
        ++analysed;
        for (const Violation& v : found)
          EXPECT_NE(v.rule, "buffer_capacity") << s.op << " on " << name << " (" << r.dtype << shape_text(r.shape)
                                               << ", schedule" << knobs << "): " << v.func << ": " << v.message;
      }
    }
    EXPECT_GE(analysed, 20) << s.op << ": too few random shapes were analysable";
  }
}

// Open gaps at the default shapes, each a rule that still fires where no schedule fix has
// landed yet (listed in the closing note of the session that left it). A gap that no longer
// fires fails the test too, so the list cannot outlive the gap.
struct KnownGap {
  std::string op, preset, dtype, rule, why;
  bool seen = false;
};
std::vector<KnownGap> known_gaps() {
  return {};  // none open (the last, qkv_attention fp16's partial bursts on ascend, closed by w sub-tiles)
}

TEST(NpuSchedules, DefaultShapesAreStrictCleanOrSayWhatTheHardwareLacks) {
  std::vector<KnownGap> gaps = known_gaps();
  auto known = [&](const std::string& op, const std::string& preset, const std::string& dtype, const Violation& v) {
    for (KnownGap& g : gaps)
      if (g.op == op && g.preset == preset && g.dtype == dtype && g.rule == v.rule) return g.seen = true;
    return false;
  };
  for (const NpuSchedule& s : npu_schedules()) {
    for (const std::string& name : preset_names()) {
      const ArchSpec& arch = preset(name);
      for (const std::string& dtype : s.dtypes) {
        for (const auto& shape : {s.decode, s.prefill}) {
          SimRequest r;
          r.op = s.op;
          r.dtype = dtype;
          r.shape = shape;
          const std::vector<Violation> found = s.stages ? simulate_stages(r, arch, true).total.violations
                                                        : simulate(analyse_op(r, arch), arch, true).violations;
          for (const Violation& v : found) {
            if (known(s.op, name, dtype, v)) continue;
            EXPECT_EQ(v.rule, "matrix_dtype") << s.op << " " << dtype << " on " << name << ": " << v.func << ": "
                                              << v.message;
          }
        }
      }
    }
  }
  for (const KnownGap& g : gaps)
    EXPECT_TRUE(g.seen) << "known gap no longer fires, remove it: " << g.op << " " << g.dtype << " on " << g.preset
                        << " (" << g.rule << ")";
}

TEST(NpuSchedules, TunerIsNeverWorseThanTheDefault) {
  const ArchSpec& arch = preset("edge-6tops");
  for (const NpuSchedule& s : npu_schedules()) {
    if (s.stages) continue;  // no knobs of its own: its stages' ops are tuned as themselves
    SimRequest r;
    r.op = s.op;
    r.shape = s.decode;
    TuneOptions o;
    o.budget_s = 2;
    const TuneResult t = tune(r, arch, o);
    ASSERT_FALSE(t.valid.empty()) << s.op;
    ASSERT_TRUE(t.default_valid) << s.op;
    EXPECT_LE(t.valid.front().result.cost.total_cycles, t.best_default.result.cost.total_cycles) << s.op;
    EXPECT_GT(t.evaluated, 1) << s.op;
    for (size_t i = 1; i < t.valid.size(); ++i)
      EXPECT_LE(t.valid[i - 1].result.cost.total_cycles, t.valid[i].result.cost.total_cycles);
  }
}

}  // namespace
}  // namespace npukit::sim
