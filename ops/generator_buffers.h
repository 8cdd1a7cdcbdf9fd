// What npukit's Generators say about their buffers: the runtime passes dense arrays whose
// every dimension starts at 0. Saying so lets Halide drop the mins from the indexing, and
// know a coordinate's parity once a schedule splits it.
#pragma once

namespace npukit::ops {

// Every dimension of each of `buffers` (Generator Inputs or Outputs of Buffer type; an
// Output once it is defined) starts at 0.
template <class... Buffers>
void set_mins_to_zero(Buffers&... buffers) {
  auto from_zero = [](auto& b) {
    for (int d = 0; d < b.dimensions(); ++d) b.dim(d).set_min(0);
  };
  (from_zero(buffers), ...);
}

}  // namespace npukit::ops
