// binary16 → fp32 for the .npy files the quantization commands read: exact (every half is a
// float). The tools' own, not golden/half.h: the tool's input path shares nothing with the
// references that check it.
#pragma once

#include <cstdint>
#include <vector>

namespace npukit::quant {

float half_to_float(uint16_t h);

// n little-endian binary16 values at `bytes`, widened.
std::vector<float> widen_halves(const uint8_t* bytes, int64_t n);

}  // namespace npukit::quant
