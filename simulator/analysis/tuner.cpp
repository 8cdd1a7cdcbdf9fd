#include "simulator/analysis/tuner.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>
#include <set>

namespace npukit::sim {

using schedules::npu::Knob;
using schedules::npu::Knobs;

std::map<std::string, std::vector<int64_t>> knob_values(const ResolvedRequest& r) {
  std::map<std::string, std::vector<int64_t>> out;
  for (const Knob& k : r.schedule->knobs) {
    std::set<int64_t> v;
    const int64_t chosen = r.knobs.at(k.name);
    const int64_t top = k.tiles.empty() ? std::min<int64_t>(k.max, chosen * 64) : std::min(k.max, r.shape.at(k.tiles));
    for (int64_t p = 1; p <= top; p *= 2) {
      v.insert(p);
      if (3 * p <= top) v.insert(3 * p);
      if (p > top / 2) break;
    }
    v.insert(top);
    v.insert(chosen);
    for (int64_t x = chosen; x >= k.min && x > 0; x /= 2) v.insert(x);
    std::vector<int64_t> in_range;
    for (int64_t x : v)
      if (x >= k.min && x <= k.max && x % k.multiple_of == 0) in_range.push_back(x);
    out[k.name] = in_range;
  }
  out["double_buffer"] = {0, 1};
  return out;
}

namespace {

struct Search {
  const ResolvedRequest& request;
  const ArchSpec& arch;
  std::chrono::steady_clock::time_point deadline;
  int64_t max_candidates;
  bool strict;
  TuneResult out;
  std::set<Knobs> seen;

  bool out_of_budget() const {
    return std::chrono::steady_clock::now() >= deadline || out.evaluated >= max_candidates;
  }

  double max_tiles = 0;  // candidates with more tiles than this are skipped unread

  // Π ceil(dim / knob) over the knobs that tile a dim: what the walk of `k` costs.
  double tiles(const Knobs& k) const {
    double t = 1;
    for (const Knob& kn : request.schedule->knobs)
      if (!kn.tiles.empty()) t *= std::ceil(double(request.shape.at(kn.tiles)) / double(k.at(kn.name)));
    return t;
  }

  // Total cycles of `k`, or -1 when it breaks a rule (counted) or was seen already.
  int64_t evaluate(const Knobs& k) {
    if (!seen.insert(k).second) {
      for (const TuneCandidate& c : out.valid)
        if (c.knobs == k) return c.result.cost.total_cycles;
      return -1;
    }
    // Far more tiles than the default means far more DMA setups and syncs: it cannot win,
    // and its walk would eat the budget.
    if (tiles(k) > max_tiles) {
      ++out.rejected["too_many_tiles"];
      return -1;
    }
    ++out.evaluated;
    TuneCandidate c;
    c.knobs = k;
    try {
      c.result = simulate(analyse_resolved(request, k, arch), arch, strict);
    } catch (const std::exception&) {
      ++out.rejected["analysis"];
      return -1;
    }
    for (const Violation& v : c.result.violations) {
      if (v.severity == Violation::error) {
        ++out.rejected[v.rule];
        return -1;
      }
    }
    const int64_t cycles = c.result.cost.total_cycles;
    out.valid.push_back(std::move(c));
    return cycles;
  }
};

}  // namespace

TuneResult tune(const SimRequest& request, const ArchSpec& arch, const TuneOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  const ResolvedRequest r = resolve_request(request, arch);
  Search s{r, arch, start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                std::chrono::duration<double>(options.budget_s)),
           options.max_candidates, options.strict, {}, {}};
  s.out.request = r;
  s.max_tiles = std::max(256.0, 16 * s.tiles(r.knobs));
  const auto values = knob_values(r);

  // The default, always evaluated (its result is reported whether or not it is valid).
  s.out.best_default.knobs = r.knobs;
  s.out.best_default.result = simulate(analyse_resolved(r, r.knobs, arch), arch, options.strict);
  s.out.default_valid = count_errors(s.out.best_default.result.violations) == 0;
  s.seen.insert(r.knobs);
  ++s.out.evaluated;
  if (s.out.default_valid) {
    s.out.valid.push_back(s.out.best_default);
  } else {
    for (const Violation& v : s.out.best_default.result.violations)
      if (v.severity == Violation::error) {
        ++s.out.rejected[v.rule];
        break;
      }
  }

  // Coordinate descent from the default: each knob over its values with the others fixed.
  Knobs best = r.knobs;
  int64_t best_cycles = s.out.default_valid ? s.out.best_default.result.cost.total_cycles : -1;
  for (bool improved = true; improved && !s.out_of_budget();) {
    improved = false;
    for (const auto& [name, vals] : values) {
      for (int64_t v : vals) {
        if (s.out_of_budget()) break;
        Knobs k = best;
        k[name] = v;
        const int64_t c = s.evaluate(k);
        if (c >= 0 && (best_cycles < 0 || c < best_cycles)) {
          best = k, best_cycles = c;
          improved = true;
        }
      }
    }
  }
  // Random samples of the whole space with what budget is left.
  std::mt19937_64 rng(options.seed);
  int64_t space = 1;
  for (const auto& [name, vals] : values) space = std::min<int64_t>(space * static_cast<int64_t>(vals.size()), 1 << 30);
  for (int64_t misses = 0; !s.out_of_budget() && static_cast<int64_t>(s.seen.size()) < space && misses < 1000;) {
    Knobs k;
    for (const auto& [name, vals] : values) k[name] = vals[rng() % vals.size()];
    if (s.seen.count(k)) {
      ++misses;
      continue;
    }
    s.evaluate(k);
  }
  std::stable_sort(s.out.valid.begin(), s.out.valid.end(), [](const TuneCandidate& a, const TuneCandidate& b) {
    return a.result.cost.total_cycles < b.result.cost.total_cycles;
  });
  s.out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return std::move(s.out);
}

}  // namespace npukit::sim
