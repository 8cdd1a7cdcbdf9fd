// INT8 GEMM Generators: the exact int32 accumulation over packed weights (one schedule
// for decode, one for prefill), and the epilogues that scale or requantize it.
#include <stdexcept>

#include "Halide.h"
#include "ops/float_convert.h"
#include "ops/generator_buffers.h"
#include "ops/int8_gemm.h"
#include "ops/int8_gemm_amx.h"
#include "schedules/cpu/int8_gemm.h"
#include "schedules/cpu/int8_gemm_amx.h"
#include "schedules/gpu/int8_gemm.h"

namespace npukit {
namespace {

using schedules::cpu::GemmShape;

class Int8GemmAccGenerator : public Halide::Generator<Int8GemmAccGenerator> {
 public:
  GeneratorParam<GemmShape> shape{"shape", GemmShape::decode,
                                  {{"decode", GemmShape::decode}, {"prefill", GemmShape::prefill}}};
  // The avx512_amx tier (cmake/NpukitKernels.cmake sets it): AMX tile matmuls. Its Halide
  // target is the avx512_vnni tier's (Halide 14 has no AMX feature of its own).
  GeneratorParam<bool> amx{"amx", false};
  Input<Halide::Buffer<int8_t, 2>> a{"a"};                // (k_pad, M)
  Input<Halide::Buffer<int8_t, 4>> w_packed{"w_packed"};  // (4, 16, k_pad/4, n_pad/16)
  Input<Halide::Buffer<int32_t, 1>> w_sums{"w_sums"};     // (n_pad)
  Input<int32_t> a_zero_point{"a_zero_point"};
  Output<Halide::Buffer<int32_t, 2>> acc{"acc"};          // (N, M)

  void generate() {
    ops::set_mins_to_zero(a, w_packed);
    w_packed.dim(0).set_extent(4);
    w_packed.dim(1).set_extent(16).set_stride(4);
    const Halide::Target target = get_target();
    // The GPU schedules stage whole tiles and K chunks, boxes that reach past the buffers'
    // edges (rows past M, groups past k_pad): read through clamps there. The values read
    // past the edges are never accumulated.
    const bool gpu = target.has_gpu_feature();
    if (amx) {
      if (gpu || !target.has_feature(Halide::Target::AVX512_SapphireRapids)) {
        throw std::invalid_argument("npukit_int8_gemm_acc: amx=true needs a CPU target with avx512_sapphirerapids, not " +
                                    target.to_string());
      }
      // A K group of 16 channels is one 64-byte row of an AMX B tile: saying so makes the B
      // rows of consecutive K steps a constant distance apart, which ops::AmxFuseK needs.
      w_packed.dim(2).set_stride(64);
      amx_acc = ops::define_int8_gemm_acc_amx(a, w_packed, w_sums, a.dim(0).extent(), a_zero_point);
      acc = amx_acc.acc;
      ops::set_mins_to_zero(acc);
      return;  // scheduled in schedule(), which may add the lowering pass
    }
    Halide::Func a_in = a, w_in = w_packed;
    if (gpu) {
      a_in = Halide::BoundaryConditions::repeat_edge(a);
      w_in = Halide::BoundaryConditions::repeat_edge(w_packed);
    }
    const bool pairwise = !gpu && schedules::cpu::sums_in_pairs(shape, target);
    ops::Int8GemmAcc g = ops::define_int8_gemm_acc(a_in, w_in, w_sums, a.dim(0).extent(), a_zero_point, pairwise);
    acc = g.acc;
    ops::set_mins_to_zero(acc);
    if (gpu) {
      schedules::gpu::schedule_int8_gemm_acc(g, shape, target);
    } else {
      schedules::cpu::schedule_int8_gemm_acc(g, shape, target);
    }
  }

  void schedule() {
    if (amx) schedules::cpu::schedule_int8_gemm_acc_amx(amx_acc, get_pipeline());
  }

 private:
  ops::Int8GemmAccAmx amx_acc;
};

enum class Epilogue { scale, fixed_point, float_round };

// y(n, m) from acc(n, m): `scale` gives floats, acc · (row_scale[m] · chan_scale[n]) + bias[n]
// (row_scale: the per-row activation scales, ones when the op has a single a_scale);
// `fixed_point` and `float_round` give int8 under the two requantization modes.
class Int8EpilogueGenerator : public Halide::Generator<Int8EpilogueGenerator> {
 public:
  GeneratorParam<Epilogue> mode{"mode", Epilogue::scale,
                                {{"scale", Epilogue::scale}, {"fixed_point", Epilogue::fixed_point}, {"float", Epilogue::float_round}}};
  Input<Halide::Buffer<int32_t, 2>> acc{"acc"};
  Input<Halide::Buffer<float, 1>> chan_scale{"chan_scale"};   // scale: a_scale·w_scale; float: the fp32 m
  Input<Halide::Buffer<float, 1>> row_scale{"row_scale"};     // scale only: [M]
  Input<Halide::Buffer<float, 1>> bias{"bias"};
  Input<Halide::Buffer<int32_t, 1>> multiplier{"multiplier"};
  Input<Halide::Buffer<int32_t, 1>> shift{"shift"};
  Input<int32_t> out_zero_point{"out_zero_point"};
  Output<Halide::Buffer<void, 2>> y{"y"};

  void generate() {
    using namespace Halide;
    ops::add_f16c_bitcode(*get_externs_map(), get_target());
    Var n("n"), m("m");
    Func out("epilogue");
    if (mode == Epilogue::scale) {
      Expr v = cast<float>(acc(n, m)) * (row_scale(m) * chan_scale(n)) + bias(n);
      out(n, m) = ops::narrow_from_f32(v, y.type(), get_target());
    } else if (mode == Epilogue::fixed_point) {
      out(n, m) = ops::requantize_fixed_point(acc(n, m), multiplier(n), shift(n), out_zero_point);
    } else {
      out(n, m) = ops::requantize_float(acc(n, m), chan_scale(n), out_zero_point);
    }
    y = out;
    if (get_target().has_gpu_feature()) {
      schedules::gpu::schedule_int8_epilogue(out, get_target());
      return;
    }
    const int vec = get_target().natural_vector_size<float>();
    out.specialize(acc.dim(0).extent() >= vec).vectorize(n, vec, TailStrategy::ShiftInwards);
    out.parallel(m);
  }
};

}  // namespace
}  // namespace npukit

HALIDE_REGISTER_GENERATOR(npukit::Int8GemmAccGenerator, npukit_int8_gemm_acc)
HALIDE_REGISTER_GENERATOR(npukit::Int8EpilogueGenerator, npukit_int8_epilogue)
