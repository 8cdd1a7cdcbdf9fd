// binary16 → fp32, exact (every half is a float): for the .npy files the quantization
// commands read, and fp16 group scales packed for int4_gemm (layouts/int4_group.h). Not
// golden/half.h: what the kit reads shares nothing with the references that check it.
#pragma once

#include <cstdint>
#include <vector>

namespace npukit::layouts {

float half_to_float(uint16_t h);

// n little-endian binary16 values at `bytes`, widened.
std::vector<float> widen_halves(const uint8_t* bytes, int64_t n);

}  // namespace npukit::layouts
