// One ahead-of-time CPU kernel per tier (cmake/NpukitKernels.cmake writes the tables, each
// with its kernel's name), and the choice among them from this CPU's features.
#pragma once

#include <string>
#include <string_view>
#include <vector>

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

// The table of one kernel: its name (what errors and listings call it) and its tiers, best
// first. kernels/<kernel>.h defines one as `npukit::kernels::<kernel>`.
template <class Fn, size_t N>
struct CpuKernel {
  const char* name;
  CpuVariant<Fn> tiers[N];
};

// The tiers of a kernel, best first: an OpSpec's cpu_tiers, from the table the build wrote.
template <class Fn, size_t N>
std::vector<std::string> tier_names(const CpuKernel<Fn, N>& kernel) {
  std::vector<std::string> names;
  for (const CpuVariant<Fn>& v : kernel.tiers) names.emplace_back(v.tier);
  return names;
}

// The best tier this CPU runs, or exactly `forced` when it is not empty. A forced tier
// that is absent or that this CPU cannot run is an error naming the missing features.
template <class Fn, size_t N>
const CpuVariant<Fn>& pick_cpu_variant(const CpuKernel<Fn, N>& kernel, std::string_view forced) {
  // Every call passes here: the success path allocates nothing (prepared ops promise that).
  for (const CpuVariant<Fn>& v : kernel.tiers) {
    if (!forced.empty() && forced != v.tier) continue;
    if (cpu_runs_tier(v.tier)) return v;
    if (!forced.empty()) {
      std::string names;
      for (const auto& m : missing_for_tier(cpu_features(), v.tier)) names += " " + m;
      fail(Errc::unsupported, "kernel {}: tier '{}' needs CPU features this machine lacks:{}", kernel.name, forced,
           names);
    }
  }
  const std::string tiers = join_names(kernel.tiers, [](const CpuVariant<Fn>& v) { return v.tier; });
  if (!forced.empty()) {
    fail(Errc::unsupported, "kernel {} has no CPU tier '{}' (it has: {})", kernel.name, forced, tiers);
  }
  fail(Errc::unsupported, "kernel {}: this CPU runs none of its tiers ({})", kernel.name, tiers);
}

}  // namespace npukit
