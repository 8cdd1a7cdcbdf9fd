// Bytes of one element of each dtype: the rules and the cost model turn element counts
// into buffer, vector and DMA bytes with it.
#pragma once

#include <cstdint>

#include "simulator/arch/arch_spec.h"

namespace npukit::sim {

constexpr int64_t dtype_bytes(Dtype d) {
  switch (d) {
    case Dtype::int8: return 1;
    case Dtype::int4: return 1;  // two per byte: a byte is the smallest unit moved or aligned
    case Dtype::fp16:
    case Dtype::bf16: return 2;
    case Dtype::fp32:
    case Dtype::int32: return 4;
  }
  return 1;
}

}  // namespace npukit::sim
