// Reading and writing NumPy .npy files: how tensors cross the tool boundary.
// Only what npukit computes on is accepted (the DTypes, little-endian, C order); anything
// else is refused with one line that says how to re-save the array from numpy.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "npukit/dtype.h"

namespace npukit::npy {

struct NpyArray {
  DType dtype = DType::float32;
  std::vector<int64_t> shape;  // {} is a 0-d array (one element)
  std::vector<uint8_t> bytes;  // C order, little-endian, size() * dtype_size(dtype) bytes

  // Number of elements: the product of shape, 1 for a 0-d array; -1 if a dimension is
  // negative or the product overflows int64.
  int64_t size() const;
};

// Reads format 1.0, 2.0 and 3.0. Throws std::runtime_error with a one-line message that
// starts with `path: `. A file larger than max_file_bytes() is refused without reading it all.
NpyArray read(const std::string& path);

// NPUKIT_MAX_NPY_BYTES, or 4 GiB when it is unset.
uint64_t max_file_bytes();

// Same as read() on bytes already in memory; `what` names the source in messages.
NpyArray parse(const std::vector<uint8_t>& file_bytes, const std::string& what);

// Writes format 1.0 (2.0 when the header does not fit in 1.0), byte for byte what
// numpy.save writes for the same array. Throws std::runtime_error if the array's bytes
// do not match its shape and dtype or the file cannot be written.
void write(const std::string& path, const NpyArray& array);

}  // namespace npukit::npy
