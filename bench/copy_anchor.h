// The bandwidth anchor every memory-bound kernel is compared with in the same run: a
// STREAM-style copy (plain vector loads and stores, no non-temporal hints) over the same
// cold arenas, split into tasks on Halide's own thread pool so that it runs on exactly
// the threads the kernels get (HL_NUM_THREADS); glibc's memcpy (non-temporal stores for
// large sizes) split the same way, as a second, harder anchor; and a plain read (vector
// loads summed into independent accumulators) of both arenas, the anchor of kernels that
// only read (attention over a KV cache).
#pragma once

#include <cstddef>

#include "bench/cold_buffers.h"

namespace npukit::bench {

struct CopyAnchor {
  double stream_gbps;  // median over rotations; bytes read + bytes written per second
  double memcpy_gbps;
  double read_gbps;    // median over rotations; bytes read per second
};

// Copies `bytes` from slot i of `src` to slot i of `dst` for rotating i, `reps` times;
// then reads `bytes` of slot i of both.
CopyAnchor measure_copy(ColdArena& src, ColdArena& dst, size_t bytes, int reps = 15);

// Seconds of one read anchor run over `bytes` at `a` and `bytes` at `b`, on the kernels'
// threads: for a read anchor timed right after each kernel call (bench/timed_calls.h).
double read_seconds(const void* a, const void* b, size_t bytes);

// Seconds of one copy anchor run (the STREAM-style copy) of `bytes` from `src` to `dst`, on
// the kernels' threads: for a copy anchor timed right after each kernel call.
double copy_seconds(const void* src, void* dst, size_t bytes);

}  // namespace npukit::bench
