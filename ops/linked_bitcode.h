// How a module of embedded LLVM bitcode (ops/CMakeLists.txt, npukit_embed_bitcode) joins
// what a Generator compiles: Halide links ExternalCode bitcode into the kernel's module
// before code generation, so its functions inline into the loops that call them. The
// helpers that ship bitcode (float_convert, fma, prefetch) add theirs through this.
#pragma once

#include <string>
#include <vector>

#include "Halide.h"

namespace npukit::ops {

// Adds the `len` bytes at `code` to `generator_externs` as the module `name` for target `t`.
inline void link_bitcode(Halide::GeneratorContext::ExternsMap& generator_externs, const Halide::Target& t,
                         const std::string& name, const unsigned char* code, size_t len) {
  generator_externs.insert(
      {name, Halide::ExternalCode::bitcode_wrapper(t, std::vector<uint8_t>(code, code + len), name)});
}

}  // namespace npukit::ops
