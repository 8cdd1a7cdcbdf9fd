// A lowering pass that prefetches, during a task's AMX tile loops, the weights of the
// channel block two tasks on (the next this thread takes when two threads alternate; one
// thread's next was prefetched by the task before). Without it a task's first row pair read
// its 128 KiB of weights from DRAM in a burst and the rest of the task left DRAM idle. The
// block's lines are spread over the task's row pairs and K steps, a few per K step, into L2
// (the module links the l2 prefetch bitcode for 1-byte elements: one line per call).
// Halide 14 cannot say this as a schedule: a prefetch's loop must belong to the stage, and
// the channel-block loop is acc's.
#pragma once

#include <string>
#include <utility>

#include "Halide.h"

namespace npukit::ops {

class AmxPrefetchNext : public Halide::Internal::IRMutator {
 public:
  // `weights`: the buffer the B tiles are loaded from (a task's block of two channel tiles,
  // contiguous, the next block right after it).
  explicit AmxPrefetchNext(std::string weights) : weights_(std::move(weights)) {}
  using IRMutator::visit;
  Halide::Internal::Stmt visit(const Halide::Internal::For* op) override;

  int prefetching_loops = 0;  // K loops given prefetches, for tests

 private:
  std::string weights_;
};

}  // namespace npukit::ops
