// The merged walk (one iteration walked per group of iterations with equal keys, iteration_key.h)
// reports exactly what walking every iteration reports: transfers with their counts and
// alignments, tiles, vector work, allocations, and so cycles and violations. Random shapes
// of every registered schedule, so that last blocks, chunks and token tiles come out
// partial, on a cube preset and a systolic one (whose attention runs on the vector unit);
// likewise every stage of a composite (qkv_attention's linear, cache writes, ...).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <random>

#include "schedules/npu/npu_schedule.h"
#include "simulator/analysis/op_simulation.h"
#include "simulator/analysis/stage_simulation.h"
#include "simulator/report/json_report.h"
#include "simulator/simulate.h"

namespace npukit::sim {
namespace {

using schedules::npu::NpuSchedule;
using schedules::npu::npu_schedules;

std::vector<std::string> walked_ops() {
  std::vector<std::string> ops;
  for (const NpuSchedule& s : npu_schedules())
    if (!s.stages) ops.push_back(s.op);  // a composite is its stages, each registered here
  return ops;
}

const NpuSchedule& schedule(const std::string& op) {
  for (const NpuSchedule& s : npu_schedules())
    if (s.op == op) return s;
  throw std::logic_error("no schedule " + op);
}

// Each dim its decode value or a random extent up to the prefill's, both capped so that
// the every-iteration reference stays quick: odd extents leave partial last tiles.
SimRequest random_request(const NpuSchedule& s, std::mt19937_64& rng) {
  constexpr int64_t cap = 320;
  SimRequest r;
  r.op = s.op;
  r.dtype = s.dtypes[rng() % s.dtypes.size()];
  for (const std::string& d : s.shape) {
    const int64_t a = std::min(s.decode.at(d), cap), b = std::min(std::max(s.decode.at(d), s.prefill.at(d)), cap);
    r.shape[d] = rng() % 3 == 0 ? a : 1 + static_cast<int64_t>(rng() % static_cast<uint64_t>(b));
  }
  return r;
}

class MergedWalk : public ::testing::TestWithParam<std::string> {};

TEST_P(MergedWalk, EqualsTheWalkOfEveryIteration) {
  const NpuSchedule& s = schedule(GetParam());
  std::mt19937_64 rng(std::hash<std::string>{}(s.op));
  int compared = 0;
  for (const char* name : {"edge-6tops", "gemmini-default"}) {
    const ArchSpec& arch = preset(name);
    for (int i = 0; i < 12; ++i) {
      const SimRequest request = random_request(s, rng);
      ResolvedRequest r;
      try {
        r = resolve_request(request, arch);
      } catch (const std::invalid_argument&) {
        continue;  // a shape the op refuses, or too many tiles to walk
      }
      const nlohmann::json merged = to_json(simulate(analyse_resolved(r, r.knobs, arch, Walk::merged), arch, false));
      const nlohmann::json every =
          to_json(simulate(analyse_resolved(r, r.knobs, arch, Walk::every_iteration), arch, false));
      ++compared;
      EXPECT_EQ(merged, every) << s.op << " on " << name << " at " << merged["shape"].dump()
                               << ": what the merged walk changes: " << nlohmann::json::diff(every, merged).dump();
    }
  }
  EXPECT_GE(compared, 8) << s.op << ": too few random shapes were analysable";
}

INSTANTIATE_TEST_SUITE_P(EveryNpuSchedule, MergedWalk, ::testing::ValuesIn(walked_ops()),
                         [](const auto& info) { return info.param; });

// A composite's stages include stage-only schedules (no registered op: a linear, a cache
// write) walked nowhere else: every stage of random shapes of every composite, both ways.
TEST(MergedWalkOfStages, EqualsTheWalkOfEveryIteration) {
  for (const NpuSchedule& s : npu_schedules()) {
    if (!s.stages) continue;
    std::mt19937_64 rng(std::hash<std::string>{}(s.op));
    int compared = 0;
    for (const char* name : {"edge-6tops", "gemmini-default"}) {
      const ArchSpec& arch = preset(name);
      const int before = compared;
      for (int i = 0; i < 24 && compared - before < 24; ++i) {
        schedules::npu::NpuStages stages;
        try {
          stages = request_stages(random_request(s, rng), arch);
        } catch (const std::invalid_argument&) {
          continue;  // dims the op refuses together (kv heads that do not divide the heads)
        }
        for (const schedules::npu::NpuStage& stage : stages.stages) {
          ResolvedRequest r;
          try {
            r = resolve_stage(stage, arch);
          } catch (const std::invalid_argument&) {
            continue;
          }
          const nlohmann::json merged =
              to_json(simulate(analyse_resolved(r, r.knobs, arch, Walk::merged), arch, false));
          const nlohmann::json every =
              to_json(simulate(analyse_resolved(r, r.knobs, arch, Walk::every_iteration), arch, false));
          ++compared;
          EXPECT_EQ(merged, every) << s.op << " stage '" << stage.label << "' on " << name << " at "
                                   << merged["shape"].dump() << ": what the merged walk changes: "
                                   << nlohmann::json::diff(every, merged).dump();
        }
      }
    }
    EXPECT_GE(compared, 8) << s.op << ": too few stages of random shapes were analysable";
  }
}

}  // namespace
}  // namespace npukit::sim
