// How many threads the kit's Halide pool runs a call's tasks on, for kernels whose schedule
// depends on it (the AMX INT8 GEMM prefetches the weights of the task this thread takes
// next, `threads` tasks on). Halide 14's runtime has a setter only, so the kit keeps the
// count: the last one given to set_halide_threads (runtime/plugin.h), or before any,
// Halide's own default (HL_NUM_THREADS, else the CPUs online). A count set by calling
// halide_set_num_threads directly is not seen: kernels then tune for the wrong count,
// which costs speed, never correctness.
#pragma once

namespace npukit {

int halide_thread_count();

// set_halide_threads's record of `n` (0: Halide's default again), clamped as Halide does.
void note_halide_threads(int n);

}  // namespace npukit
