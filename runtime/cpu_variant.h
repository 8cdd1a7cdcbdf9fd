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

// The dispatch rule, for a kernel's tier listed best first: with no `forced` tier, the first
// this CPU runs; with one (forced_rank = tier_rank(forced), a tier this CPU runs), the first
// ranked at or below it. pick_cpu_variant (a kernel table) and dispatched_cpu_tier (an op's
// listed tiers) both take the first listed tier for which this holds.
inline bool tier_dispatchable(std::string_view tier, std::string_view forced, int forced_rank) {
  return forced.empty() ? cpu_runs_tier(tier) : tier_rank(tier) <= forced_rank;
}

// The best tier this CPU runs; with a `forced` tier, the best tier at or below it
// (kCpuTiers' order), as a CPU with only that tier's features would dispatch: a kernel
// without dot products ships no avx512_vnni tier and runs its avx512 one, int8_gemm's
// accumulation has no plain avx512 tier and runs avx2. A forced tier this CPU cannot run,
// or one below all of the kernel's tiers, is an error naming what is missing.
template <class Fn, size_t N>
const CpuVariant<Fn>& pick_cpu_variant(const CpuKernel<Fn, N>& kernel, std::string_view forced) {
  // Every call passes here: the success path allocates nothing (prepared ops promise that).
  if (!forced.empty() && !cpu_runs_tier(forced)) {
    fail(Errc::unsupported, "kernel {}: {}", kernel.name, tier_unavailable(forced));
  }
  const int cap = forced.empty() ? -1 : tier_rank(forced);  // the common call forces none: no lookup
  for (const CpuVariant<Fn>& v : kernel.tiers) {
    if (tier_dispatchable(v.tier, forced, cap)) return v;
  }
  const std::string tiers = join_names(kernel.tiers, [](const CpuVariant<Fn>& v) { return v.tier; });
  if (!forced.empty()) {
    fail(Errc::unsupported, "kernel {} has no CPU tier at or below '{}' (it has: {})", kernel.name, forced, tiers);
  }
  fail(Errc::unsupported, "kernel {}: this CPU runs none of its tiers ({})", kernel.name, tiers);
}

}  // namespace npukit
