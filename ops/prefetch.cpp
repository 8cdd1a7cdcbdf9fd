#include "ops/prefetch.h"

#include "halide_prefetch_128_l1_bitcode.h"
#include "halide_prefetch_128_l2_bitcode.h"
#include "halide_prefetch_256_l1_bitcode.h"
#include "halide_prefetch_256_l2_bitcode.h"
#include "halide_prefetch_64_l1_bitcode.h"
#include "halide_prefetch_64_l2_bitcode.h"
#include "ops/linked_bitcode.h"

namespace npukit::ops {

using namespace Halide;

namespace {

struct Module {
  const unsigned char* code;
  unsigned int len;
};

// By level, then by element size (1, 2, 4 bytes: 64, 128, 256 bytes per call).
const Module kModules[2][3] = {
    {{npukit_prefetch_64_l1_bitcode, npukit_prefetch_64_l1_bitcode_len},
     {npukit_prefetch_128_l1_bitcode, npukit_prefetch_128_l1_bitcode_len},
     {npukit_prefetch_256_l1_bitcode, npukit_prefetch_256_l1_bitcode_len}},
    {{npukit_prefetch_64_l2_bitcode, npukit_prefetch_64_l2_bitcode_len},
     {npukit_prefetch_128_l2_bitcode, npukit_prefetch_128_l2_bitcode_len},
     {npukit_prefetch_256_l2_bitcode, npukit_prefetch_256_l2_bitcode_len}},
};

}  // namespace

void add_prefetch_bitcode(GeneratorContext::ExternsMap& generator_externs, const Target& t, int element_bytes,
                          PrefetchLevel level) {
  if (t.arch != Target::X86 || t.bits != 64) return;
  const int size = element_bytes == 1 ? 0 : element_bytes == 2 ? 1 : element_bytes == 4 ? 2 : -1;
  _halide_user_assert(size >= 0) << "add_prefetch_bitcode: element_bytes = " << element_bytes << "; must be 1, 2 or 4\n";
  const Module& m = kModules[level == PrefetchLevel::l1 ? 0 : 1][size];
  link_bitcode(generator_externs, t, "npukit.halide_prefetch.v1", m.code, m.len);
}

}  // namespace npukit::ops
