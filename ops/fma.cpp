#include "ops/fma.h"

#include "fma_f32_bitcode.h"
#include "ops/linked_bitcode.h"

namespace npukit::ops {

using namespace Halide;

bool has_native_fma(const Target& t) {
  return t.arch == Target::X86 && t.bits == 64 && !t.has_gpu_feature() && t.has_feature(Target::FMA);
}

void add_fma_bitcode(GeneratorContext::ExternsMap& generator_externs, const Target& t) {
  if (!has_native_fma(t)) return;
  link_bitcode(generator_externs, t, "npukit.fma_f32.v1", npukit_fma_f32_bitcode, npukit_fma_f32_bitcode_len);
}

Expr fma(Expr a, Expr b, Expr c) {
  _halide_user_assert(a.type().element_of() == Float(32) && b.type() == a.type() && c.type() == a.type())
      << "fma: operands must be fp32 of one type; got " << a.type() << ", " << b.type() << ", " << c.type() << "\n";
  const Type type = a.type();
  return Internal::Call::make(type, "npukit_fma_f32", {std::move(a), std::move(b), std::move(c)},
                              Internal::Call::PureExtern);
}

}  // namespace npukit::ops
