// Software prefetch that works on x86 with Halide 14. A prefetch directive
// (Stage::prefetch) there touches one line in two for fp16 and one in four for fp32, with
// `prefetchnta`, which on a streaming kernel measured slower than no prefetch at all; with
// this bitcode linked, every line of the prefetched box is fetched, into L1 (`prefetcht0`)
// or L2 (`prefetcht1`). See ops/halide_prefetch.ll.in. Halide still counts its calls by
// bytes (one per 64 bytes of the box) while stepping them by 64 elements, so with 2-byte
// elements the calls cover twice the box and fetch each line twice (decode attention's fp16
// v rows, prefetched per row and tile: each line twice), 4 times with 4-byte elements.
// Only the pointer reaches `_halide_prefetch`: the bitcode cannot tell a repeat.
#pragma once

#include "Halide.h"

namespace npukit::ops {

// The cache level a prefetched line goes to. l1 suits one stream a few KB ahead; several
// streams that far ahead fill a 32 KB L1 with lines not yet used, evicting the working set
// (decode attention's k and v rows: ops/attention.h).
enum class PrefetchLevel { l1, l2 };

// Links the prefetch bitcode for prefetched buffers of `element_bytes` (1, 2 or 4) into
// what `generator_externs` compiles, on x86-64; other targets keep Halide's own. A module
// gets one prefetch width and level: every buffer its directives prefetch has this element
// size and goes to `level`.
void add_prefetch_bitcode(Halide::GeneratorContext::ExternsMap& generator_externs, const Halide::Target& t,
                          int element_bytes, PrefetchLevel level = PrefetchLevel::l1);

}  // namespace npukit::ops
