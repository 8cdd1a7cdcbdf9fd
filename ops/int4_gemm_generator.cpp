// The INT4-weight GEMM Generator (docs/ops/int4_gemm.md): activations of `a.type` (int8,
// float32, float16; OpenCL's fp16 as uint16 bits) against weights, scales and zero points in
// the blocked layout of layouts/int4_group.h, y of `y.type` (float32, float16).
#include "Halide.h"
#include "ops/float_convert.h"
#include "ops/generator_buffers.h"
#include "ops/int4_gemm.h"
#include "schedules/gpu/gpu_target.h"

namespace npukit {
namespace {

class Int4GemmGenerator : public Halide::Generator<Int4GemmGenerator> {
 public:
  Input<Halide::Buffer<void, 2>> a{"a"};                  // (k_pad, M), zero past K
  Input<Halide::Buffer<uint8_t, 4>> w{"w"};              // (4, 16, k_pad / 8, n_pad / 16)
  Input<Halide::Buffer<float, 3>> scales{"scales"};       // (16, groups, n_pad / 16)
  Input<Halide::Buffer<uint8_t, 3>> zero_points{"zero_points"};  // (16, groups, n_pad / 16)
  Input<Halide::Buffer<float, 1>> a_scales{"a_scales"};   // (M): int8 a only
  Input<uint8_t> nibble_xor{"nibble_xor"};
  Input<int32_t> group{"group"};
  Output<Halide::Buffer<void, 2>> y{"y"};                 // (N, M)

  void generate() {
    const Halide::Target target = get_target();
    ops::add_f16c_bitcode(*get_externs_map(), target);
    ops::set_mins_to_zero(a, w, scales, zero_points, a_scales);
    const int lanes = ops::kInt4Lanes;
    w.dim(0).set_extent(4);
    w.dim(1).set_extent(lanes).set_stride(4);
    scales.dim(0).set_extent(lanes);
    zero_points.dim(0).set_extent(lanes);
    ops::Int4Gemm op = ops::define_int4_gemm(a, a.type(), w, scales, zero_points, a_scales, nibble_xor, group,
                                             scales.dim(1).extent(), y.type(), target);
    y = op.out;
    ops::set_mins_to_zero(y);
    if (schedules::gpu::is_gpu(target)) {
      schedules::gpu::schedule_int4_gemm(op, target);
    } else {
      schedules::cpu::schedule_int4_gemm(op, target);
    }
  }
};

}  // namespace
}  // namespace npukit

HALIDE_REGISTER_GENERATOR(npukit::Int4GemmGenerator, npukit_int4_gemm)
