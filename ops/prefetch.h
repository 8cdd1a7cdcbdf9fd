// Software prefetch that works on x86 with Halide 14, in two parts.
// - Halide's runtime fetches one line per call with `prefetchnta`, which on a streaming
//   kernel measured slower than no prefetch at all: add_prefetch_bitcode links a
//   `_halide_prefetch` that fetches the line into L1 (`prefetcht0`) or L2 (`prefetcht1`).
// - Halide splits a prefetched box into one call per 64 bytes of its innermost dimension
//   but steps the calls' offset, which counts elements, by 64 (src/Prefetch.cpp,
//   SplitPrefetch): with 2-byte elements the calls reach twice the box's width, with 4-byte
//   ones four times, and fetch every other (every fourth) line of it. PrefetchLineSteps, a
//   lowering pass, steps them by 64 bytes, so the calls fetch each line of the box once.
//   (Before it, the bitcode fetched 64 elements per call: every line of an fp16 box twice,
//   and a line past it. Halving decode attention's prefetches changed no time measurably on
//   the Xeon with AMX, nor on Zen 4 in session 27: docs/performance.md, session 38.)
// A module that links the bitcode adds the pass too (add_prefetch_line_steps, from the
// Generator's schedule(), once its outputs are defined).
#pragma once

#include <string>

#include "Halide.h"

namespace npukit::ops {

// The cache level a prefetched line goes to. l1 suits one stream a few KB ahead; several
// streams that far ahead fill a 32 KB L1 with lines not yet used, evicting the working set
// (decode attention's k and v rows: ops/attention.h).
enum class PrefetchLevel { l1, l2 };

// Links the prefetch bitcode (one 64-byte line per call, into `level`) into what
// `generator_externs` compiles, on x86-64; other targets keep Halide's own. A module gets
// one level: every line its prefetches fetch goes there.
void add_prefetch_bitcode(Halide::GeneratorContext::ExternsMap& generator_externs, const Halide::Target& t,
                          PrefetchLevel level = PrefetchLevel::l1);

// The lowering pass: each prefetch call in one of Halide's split loops
// (`prefetch_split_<buffer>.0`) whose offset grows by a step, read as elements, that
// Halide counted in bytes (64, a stride in bytes, or a select of ± 64 on the stride's sign)
// grows by step / element size instead. Calls of 1-byte elements are right already and
// stay as they are; a call whose offset is not of that form is left alone and counted.
class PrefetchLineSteps : public Halide::Internal::IRMutator {
 public:
  using IRMutator::visit;
  Halide::Internal::Stmt visit(const Halide::Internal::For* op) override;
  Halide::Internal::Stmt visit(const Halide::Internal::Evaluate* op) override;

  int restepped = 0;   // calls whose step it divided by their element size (for tests)
  int not_linear = 0;  // calls in a split loop it could not read (for tests)

 private:
  std::string split_loop_;  // the innermost enclosing split loop, if any
};

// Adds PrefetchLineSteps to `pipeline`'s lowering.
void add_prefetch_line_steps(Halide::Pipeline pipeline);

}  // namespace npukit::ops
