// The float .npy files the quantization commands read (weights, activations, calibration
// samples): float32, or float16 widened exactly, so that every result is the same as for the
// float32 copy of the file.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace npukit::cli {

struct FloatNpy {
  std::vector<int64_t> shape;  // as the file has it ({} for a 0-d array)
  std::vector<float> values;   // C order
};

// The array at `path`. `key` is how the user named it, put before the path in every message
// ("--in a=", "layer.json: ops[2].in.a: "), `what` what it must hold ("weights", "calibration
// samples"). A read error, a dtype other than float32 and float16, or data that does not match
// the shape is one line naming key and path; the callers check the rank, emptiness and values.
FloatNpy read_float_npy(const std::string& key, const std::string& path, std::string_view what);

}  // namespace npukit::cli
