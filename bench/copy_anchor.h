// The bandwidth anchor every memory-bound kernel is compared with in the same run: a
// STREAM-style copy (plain vector loads and stores, no non-temporal hints, the same
// threads) over the same cold arenas, and glibc's memcpy (non-temporal stores for large
// sizes) as a second, harder anchor.
#pragma once

#include <cstddef>

#include "bench/cold_buffers.h"

namespace npukit::bench {

struct CopyAnchor {
  double stream_gbps;  // median of several rotations; bytes read + bytes written per second
  double memcpy_gbps;
};

// Copies `bytes` from slot i of `src` to slot i of `dst` for rotating i, with `threads`
// threads each taking a contiguous share, `reps` times; returns the medians.
CopyAnchor measure_copy(ColdArena& src, ColdArena& dst, size_t bytes, int threads, int reps = 15);

}  // namespace npukit::bench
