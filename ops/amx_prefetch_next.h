// A lowering pass that prefetches, during a task's AMX tile loops, the weights of the
// channel block `blocks_ahead` tasks on. Without it a task's first row pair read its
// 128 KiB of weights from DRAM in a burst and the rest of the task left DRAM idle. The
// block's lines are spread over the task's row pairs and K steps, a few per K step, into
// L2 (the module links the l2 prefetch bitcode: one line per call).
// Halide 14 cannot say this as a schedule: a prefetch's loop must belong to the stage, and
// the channel-block loop is acc's.
//
// It applies to a serial loop (the row pairs) holding exactly one K loop (a serial loop of
// tile matmuls loading B tiles from `weights`, with no loop inside) whose B offsets name
// `tiles_per_block` channel tiles, a constant distance apart, and can be evaluated ahead of
// its body; the next blocks lie right after the block in `weights`. A prefetch past the
// buffer's end (the last blocks) does nothing on x86.
#pragma once

#include <string>
#include <utility>

#include "Halide.h"

namespace npukit::ops {

class AmxPrefetchNext : public Halide::Internal::IRMutator {
 public:
  // `blocks_ahead` may be a run-time value: an expression the loop nest's scope defines.
  // (Both AMX kernels pass 1, the next block of a thread's slab.)
  AmxPrefetchNext(std::string weights, int tiles_per_block, Halide::Expr blocks_ahead)
      : weights_(std::move(weights)), tiles_per_block_(tiles_per_block), blocks_ahead_(std::move(blocks_ahead)) {}
  using IRMutator::visit;
  Halide::Internal::Stmt visit(const Halide::Internal::For* op) override;

  int prefetching_loops = 0;  // K loops given prefetches, for tests

 private:
  std::string weights_;
  int tiles_per_block_;
  Halide::Expr blocks_ahead_;
};

}  // namespace npukit::ops
