// Element types that cross npukit's boundaries (.npy files, DLPack, the registry, golden).
// Header-only and dependency-free so that golden/ can use it without touching the kernels.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace npukit {

enum class DType : uint8_t { float32, float16, float64, int8, uint8, int32, int64 };

inline constexpr DType kAllDTypes[] = {DType::float32, DType::float16, DType::float64, DType::int8,
                                       DType::uint8,   DType::int32,   DType::int64};

constexpr std::string_view dtype_name(DType t) {
  switch (t) {
    case DType::float32: return "float32";
    case DType::float16: return "float16";
    case DType::float64: return "float64";
    case DType::int8: return "int8";
    case DType::uint8: return "uint8";
    case DType::int32: return "int32";
    case DType::int64: return "int64";
  }
  return "?";
}

constexpr size_t dtype_size(DType t) {
  switch (t) {
    case DType::float32: return 4;
    case DType::float16: return 2;
    case DType::float64: return 8;
    case DType::int8: return 1;
    case DType::uint8: return 1;
    case DType::int32: return 4;
    case DType::int64: return 8;
  }
  return 0;
}

constexpr bool dtype_is_float(DType t) {
  return t == DType::float32 || t == DType::float16 || t == DType::float64;
}

inline std::optional<DType> dtype_from_name(std::string_view s) {
  for (DType t : kAllDTypes) {
    if (dtype_name(t) == s) return t;
  }
  return std::nullopt;
}

}  // namespace npukit
