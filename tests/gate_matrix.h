// The per-op gate suites: every input class of every dtype on the best CPU tier, and
// the chosen classes on the lower tiers (which ship too and run on CPUs without AVX-512).
#pragma once

#include <gtest/gtest.h>

#include <cctype>
#include <ostream>
#include <string>
#include <vector>

#include "runtime/cpu_features.h"
#include "runtime/registry.h"
#include "tools/gate/gate.h"

namespace npukit {

struct GateCell {
  std::string op, target, dtype, input_class;
};

// How gtest and ctest show a cell (`GetParam() = ...`), instead of its bytes.
inline void PrintTo(const GateCell& c, std::ostream* os) {
  *os << c.op << " on " << c.target << ", " << c.dtype << ", " << c.input_class;
}

inline std::vector<GateCell> gate_matrix(const std::string& op, const std::vector<std::string>& dtypes,
                                         const std::vector<std::string>& lower_tier_classes) {
  std::vector<GateCell> out;
  for (const std::string& dtype : dtypes) {
    for (const char* cls : {"normal", "boundary", "overflow", "nan_inf", "shape"}) out.push_back({op, "cpu", dtype, cls});
    for (const char* tier : {"cpu:avx2", "cpu:sse41"}) {
      for (const std::string& cls : lower_tier_classes) out.push_back({op, tier, dtype, cls});
    }
  }
  return out;
}

// The gate's results for one cell, in this process.
inline auto run_cell(const GateCell& cell) {
  gate::Options o;
  o.ops = {cell.op};
  o.targets = {cell.target};
  o.dtypes = {cell.dtype};
  o.classes = {cell.input_class};
  o.isolate = false;
  return gate::run(all_ops(), o);
}

inline void expect_every_case_passes(const GateCell& cell) {
  const auto results = run_cell(cell);
  ASSERT_FALSE(results.empty());
  for (const auto& r : results) {
    EXPECT_EQ(r.status, golden::Status::pass)
        << r.case_name << ": " << golden::status_name(r.status) << " " << r.summary << " " << r.error
        << "\n  repro: " << r.repro;
  }
}

// A cell forced onto a tier this CPU may lack: where the CPU runs `tier`, every case
// passes; where it does not, each case must be refused (UNSUPPORTED, its error containing
// `refusal`), and the cell is skipped saying how many and which cases were not runnable
// here, never passed.
inline void expect_every_case_passes_or_is_not_runnable(const GateCell& cell, const std::string& tier,
                                                        const std::string& refusal) {
  if (cpu_runs_tier(tier)) {
    expect_every_case_passes(cell);
    return;
  }
  const auto results = run_cell(cell);
  ASSERT_FALSE(results.empty());
  std::string names;
  for (const auto& r : results) {
    EXPECT_EQ(r.status, golden::Status::unsupported) << r.case_name << ": " << r.error;
    EXPECT_NE(r.error.find(refusal), std::string::npos) << r.case_name << ": " << r.error;
    names += "\n  " + r.case_name;
  }
  GTEST_SKIP() << "not runnable on this CPU (no " << tier << ": " << describe(cpu_features()) << "): "
               << results.size() << " cases of " << cell.target << " " << cell.dtype << " " << cell.input_class << ":"
               << names;
}

inline std::string gate_cell_name(const testing::TestParamInfo<GateCell>& info) {
  std::string n = info.param.target + "_" + info.param.dtype + "_" + info.param.input_class;
  for (char& c : n) c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return n;
}

}  // namespace npukit
