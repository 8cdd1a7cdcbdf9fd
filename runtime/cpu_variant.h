// One ahead-of-time CPU kernel per tier (cmake/NpukitKernels.cmake writes the tables), and
// the choice among them from this CPU's features.
#pragma once

#include <string>
#include <string_view>

#include "runtime/cpu_features.h"
#include "runtime/error.h"
#include "runtime/text.h"

namespace npukit {

template <class Fn>
struct CpuVariant {
  std::string_view tier;  // a view, so that the per-call comparisons measure no lengths
  const char* halide_target;
  Fn fn;
};

// The best tier this CPU runs, or exactly `forced` when it is not empty. A forced tier
// that is absent or that this CPU cannot run is an error naming the missing features.
template <class Fn, size_t N>
const CpuVariant<Fn>& pick_cpu_variant(const CpuVariant<Fn> (&table)[N], const char* kernel,
                                       std::string_view forced) {
  // Every call passes here: the success path allocates nothing (prepared ops promise that).
  for (const CpuVariant<Fn>& v : table) {
    if (!forced.empty() && forced != v.tier) continue;
    if (cpu_runs_tier(v.tier)) return v;
    if (!forced.empty()) {
      std::string names;
      for (const auto& m : missing_for_tier(cpu_features(), v.tier)) names += " " + m;
      fail(Errc::unsupported, "kernel {}: tier '{}' needs CPU features this machine lacks:{}", kernel, forced, names);
    }
  }
  const std::string tiers = join_names(table, [](const CpuVariant<Fn>& v) { return v.tier; });
  if (!forced.empty()) {
    fail(Errc::unsupported, "kernel {} has no CPU tier '{}' (it has: {})", kernel, forced, tiers);
  }
  fail(Errc::unsupported, "kernel {}: this CPU runs none of its tiers ({})", kernel, tiers);
}

}  // namespace npukit
