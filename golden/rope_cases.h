// Input classes for RoPE: the cases the gate runs a kernel on and checks against
// golden::rope.
#pragma once

#include <vector>

#include "golden/cases.h"
#include "npukit/dtype.h"

namespace npukit::golden {

// The cases of one input class for x of `dtype` (float16 and float32 get their own
// overflow cases; float64 uses float32's). Integer dtypes have no RoPE cases: empty.
//
// Tensor t of case i (its position in the returned vector) is drawn from
// case_seed("rope/<class>/<t>", i, chunk); the shuffle of positions from
// "rope/<class>/positions_order". The same (class, dtype) always gives the same bits.
//
// Dims "tokens", "heads", "head_dim"; inputs "x" [tokens, heads, head_dim] of dtype and
// "positions" [tokens] of int32 (integers held as doubles), every one in [0, max_position).
// Every case sets all four params: "theta" (real, number_text), "style" ("interleaved" or
// "half"), "rotary_dim" and "max_position" (integers in decimal, as an integer param is
// parsed). Unless a case says otherwise x ~ N(0, 1), positions are 0, 1, ..., tokens − 1,
// rotary_dim = head_dim, max_position = 2^20.
//   normal:   decode [1, 32, 128] at a random position, [17, 8, 64], prefill [128, 32, 128],
//             GQA-like and Llama-13B-like heads; consecutive, shuffled and random
//             positions; both styles; theta 10000 and 500000.
//   boundary: position 0 alone (identity) and max_position − 1 = 1048575, positions crowded
//             just below it; max_position = 4096 with position 4095; head_dim 64, 80, 128,
//             256; rotary_dim 32 of 128, 64 of 80, 64 of 256, 32 of 64, and 2.
//   overflow: float16: |x| in [5e4, 65504] and |x| = 65504, whose rotations reach up to
//             √2·65504 and so hold ±Inf once rounded to float16, and |x| in [3e4, 46000]
//             (below 65504/√2), which cannot overflow.
//             float32: |x| in [1e38, FLT_MAX] (some outputs round to ±Inf in float32) and
//             |x| in [1e37, 2.4e38] (below FLT_MAX/√2), which cannot.
//             Both: positions in [2^20 − 4096, 2^20) with theta 500000 and 10000, where a
//             float32 angle p·inv_freq is off by up to ~0.03 rad.
//   nan_inf:  NaN, +Inf and −Inf each in its own pair among normal values, for both styles;
//             +Inf and −Inf in one pair; Inf at a token at position 0 (Inf·sin 0 = NaN
//             for its partner); NaN and Inf in pass-through dims (rotary_dim < head_dim).
//             Golden is non-finite only inside the pairs that hold them.
//   shape:    tokens 1, 2, 7, 64, 257, 4097 against heads 1, 3, 64 and head_dim 2, 6, 64
//             (not the full product), both styles, some with rotary_dim < head_dim.
// Each class stays under ~8M elements so that it runs in about a second.
std::vector<Case> rope_cases(InputClass input_class, DType dtype);

}  // namespace npukit::golden
