// The timing loop and the bandwidth counters that every registry-level bench shares.
#pragma once

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <initializer_list>
#include <utility>
#include <vector>

#include "bench/batch_timing.h"
#include "bench/copy_anchor.h"
#include "runtime/bind.h"
#include "runtime/halide_threads.h"

namespace npukit::bench {

// Times `run()` with manual time; `before()` (e.g. the cold rotation) and `after(seconds)`
// run outside the timed region. Returns the median seconds of one run.
template <class Before, class Run, class After>
double time_runs(benchmark::State& state, Before before, Run run, After after) {
  std::vector<double> seconds;
  for (auto _ : state) {
    before();
    const auto t0 = std::chrono::steady_clock::now();
    run();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    state.SetIterationTime(s);
    seconds.push_back(s);
    after(s);
  }
  return median_of(seconds);
}

// time_runs of run_call(call); `before` points the call at the next buffers.
template <class Before, class After>
double time_calls(benchmark::State& state, Call& call, Before before, After after) {
  return time_runs(state, [&] { before(call); }, [&] { run_call(call); }, after);
}

template <class Before>
double time_calls(benchmark::State& state, Call& call, Before before) {
  return time_calls(state, call, before, [](double) {});
}

// time_calls with the named tensors moved to the next slot of their cold arenas before
// each call, so every call reads and writes memory the previous ones did not touch.
inline double time_cold_calls(benchmark::State& state, Call& call,
                              std::initializer_list<std::pair<const char*, ColdArena*>> rotating) {
  size_t slot = 1;
  return time_calls(state, call, [&](Call& c) {
    for (const auto& [name, arena] : rotating) c.tensors[name].data = arena->slot(slot);
    ++slot;
  });
}

// A kernel time paired with an anchor time from the same moment: after each call, the
// anchor runs over the same bytes of the arenas' next slots (cold too, and never the
// slot of the next call). On a shared machine whose bandwidth drifts by 2x within
// minutes, the median of these per-call ratios is what stays put; an anchor measured
// once before the loop does not (one fp16 rms_norm row's vs_copy read 0.49 in one run
// and 0.94 in the next, on a Zen 4 VM).
struct PairedTiming {
  double median_seconds;    // of one kernel call
  double median_vs_anchor;  // kernel GB/s over the anchor's, per call
};

// The loop every pairing shares: `point(slot)` points the run at slot `slot` of its
// arenas, and `vs_anchor(slot, seconds)` times the anchor on slot + 1 and returns the
// run's ratio to it; the runs take every other slot.
template <class Point, class Run, class VsAnchor>
PairedTiming time_runs_paired(benchmark::State& state, Point point, Run run, VsAnchor vs_anchor) {
  std::vector<double> ratios;
  size_t slot = 1;
  const double median = time_runs(
      state, [&] { point(slot); }, run,
      [&](double s) {
        ratios.push_back(vs_anchor(slot, s));
        slot += 2;
      });
  return {median, median_of(ratios)};
}

// time_runs_paired of run_call(call); `point(call, slot)` points the call at the slot.
template <class Point, class VsAnchor>
PairedTiming time_calls_paired(benchmark::State& state, Call& call, Point point, VsAnchor vs_anchor) {
  return time_runs_paired(
      state, [&](size_t slot) { point(call, slot); }, [&] { run_call(call); }, vs_anchor);
}

// For a kernel that reads two arenas (the KV cache): the read anchor reads `bytes` of both.
inline PairedTiming time_cold_calls_paired_read(benchmark::State& state, Call& call, const char* a_name,
                                                ColdArena& a, const char* b_name, ColdArena& b, size_t bytes) {
  return time_calls_paired(
      state, call,
      [&](Call& c, size_t slot) {
        c.tensors[a_name].data = a.slot(slot);
        c.tensors[b_name].data = b.slot(slot);
      },
      // Both move 2 · bytes, so the ratio of GB/s is the ratio of the times.
      [&](size_t slot, double s) { return read_seconds(a.slot(slot + 1), b.slot(slot + 1), bytes) / s; });
}

// Seconds of the read anchor over `bytes` of slot `slot` of each arena (a kernel that reads
// weights and caches of different sizes): each read as two halves, read_seconds' two buffers.
inline double read_seconds_of(std::initializer_list<std::pair<ColdArena*, size_t>> arenas, size_t slot) {
  double seconds = 0;
  for (const auto& [arena, bytes] : arenas) {
    const char* p = static_cast<const char*>(arena->slot(slot));
    seconds += read_seconds(p, p + bytes / 2, bytes / 2);
  }
  return seconds;
}

// For a kernel that moves `kernel_bytes` per call: the copy anchor copies `copy_bytes` (the
// bench's measure_copy size) from `src` to `dst`, and the ratio is kernel GB/s over copy
// GB/s (2 · copy_bytes).
template <class Point>
PairedTiming time_calls_paired_copy(benchmark::State& state, Call& call, Point point, ColdArena& src, ColdArena& dst,
                                    size_t copy_bytes, double kernel_bytes) {
  return time_calls_paired(state, call, point, [&](size_t slot, double s) {
    const double copy_s = copy_seconds(src.slot(slot + 1), dst.slot(slot + 1), copy_bytes);
    return (kernel_bytes / s) / (2.0 * copy_bytes / copy_s);
  });
}

// time_calls_paired_copy with the named tensors at slot `slot` of their arenas.
inline PairedTiming time_cold_calls_paired_copy(benchmark::State& state, Call& call,
                                                std::initializer_list<std::pair<const char*, ColdArena*>> rotating,
                                                ColdArena& src, ColdArena& dst, size_t copy_bytes,
                                                double kernel_bytes) {
  return time_calls_paired_copy(
      state, call,
      [&](Call& c, size_t slot) {
        for (const auto& [name, arena] : rotating) c.tensors[name].data = arena->slot(slot);
      },
      src, dst, copy_bytes, kernel_bytes);
}

// GB/s of `bytes` moved per call in `seconds`, and its ratios to the in-run anchors.
inline void set_bandwidth_counters(benchmark::State& state, double bytes, double seconds, const CopyAnchor& anchor) {
  const double gbps = bytes / seconds / 1e9;
  state.counters["threads"] = halide_thread_count();
  state.counters["GB/s"] = gbps;
  state.counters["copy_GB/s"] = anchor.stream_gbps;
  state.counters["vs_copy"] = gbps / anchor.stream_gbps;
  state.counters["vs_memcpy"] = gbps / anchor.memcpy_gbps;
  state.counters["read_GB/s"] = anchor.read_gbps;
  state.counters["vs_read"] = gbps / anchor.read_gbps;
}

// The same with the kernel's time from a paired copy timing, and its vs_copy_paired.
inline void set_bandwidth_counters(benchmark::State& state, double bytes, const PairedTiming& timing,
                                   const CopyAnchor& anchor) {
  set_bandwidth_counters(state, bytes, timing.median_seconds, anchor);
  state.counters["vs_copy_paired"] = timing.median_vs_anchor;
}

}  // namespace npukit::bench
