// A lowering pass that gives Halide 14's AMX tile matmuls more than one accumulator: v14
// lowers one AMX accumulator per loop nest (src/ExtractTileOperations.cpp at v14.0.0 refuses
// a nested second one), so each tdpbssd waits on the one before it and loads both of its
// operand tiles afresh. oneDNN keeps 2 × 2 accumulators, each A and B tile feeding two.
//
// The pass unrolls and jams: a serial loop of constant extent 2 around a tile matmul nest
// (an AMX accumulator, its zeroing, its K loop, its store) becomes the two iterations'
// nests zipped statement by statement, so their K loops run as one loop with both
// accumulators live; LLVM then loads a tile the two share (A across channel tiles, B across
// row tiles) once. Applied to the loops of two channel tiles and of two row tiles, it keeps
// four accumulators. It jams only where the body writes nothing but its own AMX
// accumulators and, through tile_store, buffers that nothing in the body reads, so no
// iteration reads what the other writes. It assumes, without checking, that the two
// iterations store disjoint tiles (as a loop over tiles does): zipped, the stores still
// run in iteration order statement by statement, but not as whole iterations.
#pragma once

#include "Halide.h"

namespace npukit::ops {

class AmxJam : public Halide::Internal::IRMutator {
 public:
  using IRMutator::visit;
  Halide::Internal::Stmt visit(const Halide::Internal::For* op) override;

  int jammed_loops = 0;  // loops of two iterations zipped into one body, for tests
};

}  // namespace npukit::ops
