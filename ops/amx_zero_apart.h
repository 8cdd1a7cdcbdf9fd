// A lowering pass that starts each AMX accumulator from a load of its own zeros instead of
// Halide 14's tile_zero. v14 declares tile_zero readnone, so LLVM merges the zeroings of a
// loop's accumulators into one value and copies it into each through the stack: a
// tilestored and then a tileloadd of the same 1 KiB, a load that waits until every store
// before it has drained. Where the previous row pair's tiles went straight to acc (lines
// not in cache), that wait was 68% of the call at M = 512, K = 256 on the Xeon with AMX.
//
// Each accumulator's tile_zero becomes a tile load with a row stride of 0 from its own
// 64-byte row of a zeroed buffer (different rows: LLVM cannot merge the loads), the buffer
// zeroed once per call, before the loops, so no recent store stands in the way.
#pragma once

#include <map>
#include <string>

#include "Halide.h"

namespace npukit::ops {

class AmxZeroApart : public Halide::Internal::IRMutator {
 public:
  using IRMutator::visit;
  Halide::Internal::Stmt mutate(const Halide::Internal::Stmt& s) override;
  Halide::Internal::Stmt visit(const Halide::Internal::Store* op) override;

  static constexpr int kRowsOfZeros = 8;  // AMX's tile registers: accumulators per nest at most
  int replaced_zeroings = 0;              // for tests

 private:
  int depth_ = 0;
  std::map<std::string, int> row_of_;  // accumulator -> its row of zeros
};

}  // namespace npukit::ops
