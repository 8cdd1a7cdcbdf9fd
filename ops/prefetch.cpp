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

void add_prefetch_bitcode(GeneratorContext::ExternsMap& generator_externs, const Target& t, int element_bytes,
                          PrefetchLevel level) {
  if (t.arch != Target::X86 || t.bits != 64) return;
  const unsigned char* code = nullptr;
  unsigned int len = 0;
  const bool l1 = level == PrefetchLevel::l1;
  switch (element_bytes) {
    case 1:
      code = l1 ? npukit_prefetch_64_l1_bitcode : npukit_prefetch_64_l2_bitcode;
      len = l1 ? npukit_prefetch_64_l1_bitcode_len : npukit_prefetch_64_l2_bitcode_len;
      break;
    case 2:
      code = l1 ? npukit_prefetch_128_l1_bitcode : npukit_prefetch_128_l2_bitcode;
      len = l1 ? npukit_prefetch_128_l1_bitcode_len : npukit_prefetch_128_l2_bitcode_len;
      break;
    case 4:
      code = l1 ? npukit_prefetch_256_l1_bitcode : npukit_prefetch_256_l2_bitcode;
      len = l1 ? npukit_prefetch_256_l1_bitcode_len : npukit_prefetch_256_l2_bitcode_len;
      break;
  }
  _halide_user_assert(code) << "add_prefetch_bitcode: element_bytes = " << element_bytes << "; must be 1, 2 or 4\n";
  link_bitcode(generator_externs, t, "npukit.halide_prefetch.v1", code, len);
}

}  // namespace npukit::ops
