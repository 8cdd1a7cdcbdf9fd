// A lowering pass that makes Halide 14's AMX tile matmuls whole: v14 recognizes a tile
// matmul only with K = 4 bytes per instruction (src/ExtractTileOperations.cpp at v14.0.0:
// its B tile is one row of N·4 bytes; K > 4 arrived upstream after v14, PR #6582). One
// tdpbssd then does 1/16 of the work it could for the same issue cost, and the kernel ran at
// 50 GOP/s here, a fifth of the VNNI tier.
//
// The schedule unrolls up to 16 consecutive K = 4 steps; this pass, which runs after
// Halide's tile extraction, replaces each run of such steps by one tile_matmul with
// K = 4·n bytes: A is loaded as 4·n bytes of each row, and B as n rows, one per K group, at
// the distance the K = 4 steps' B loads were apart. That is the same sum in the same int32
// arithmetic (each K = 4 step added A[row][k..k+3]·B-row[col·4 ..]), so the pass only ever
// fuses steps it has proved contiguous: same tile, same A and B buffers and strides, A
// offsets 4 bytes apart, B offsets a constant distance apart. Anything else stays as it was.
#pragma once

#include "Halide.h"

namespace npukit::ops {

class AmxFuseK : public Halide::Internal::IRMutator {
 public:
  using IRMutator::visit;
  Halide::Internal::Stmt visit(const Halide::Internal::Block* op) override;

  int fused_steps = 0;  // K = 4 steps folded into a wider one, for tests
};

}  // namespace npukit::ops
