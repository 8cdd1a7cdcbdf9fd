// The registry entry of INT4-weight GEMM (docs/ops/int4_gemm.md): the weights, scales and
// zero points of `npukit quantize --scheme int4-group:G`, packed once as prepared-op
// constants (layouts/int4_group.h) or on every plain call.
#include <cstring>
#include <memory>

#include "kernels/int4_gemm_f16_f16.h"
#include "kernels/int4_gemm_f16_f16_gpu.h"
#include "kernels/int4_gemm_f16_f32.h"
#include "kernels/int4_gemm_f16_f32_gpu.h"
#include "kernels/int4_gemm_f32_f16.h"
#include "kernels/int4_gemm_f32_f16_gpu.h"
#include "kernels/int4_gemm_f32_f32.h"
#include "kernels/int4_gemm_f32_f32_gpu.h"
#include "kernels/int4_gemm_i8_f16.h"
#include "kernels/int4_gemm_i8_f16_gpu.h"
#include "kernels/int4_gemm_i8_f32.h"
#include "kernels/int4_gemm_i8_f32_gpu.h"
#include "layouts/int4_group.h"
#include "runtime/cpu_features.h"
#include "runtime/error.h"
#include "runtime/gpu_memory.h"
#include "runtime/kernel_call.h"
#include "runtime/registry.h"
#include "runtime/scratch_arena.h"

namespace npukit {
namespace {

using layouts::Int4Layout;
using PackedScales = layouts::PackedInt4Groups<float>;
using PackedZeroPoints = layouts::PackedInt4Groups<uint8_t>;

int64_t groups_for(int64_t K, int64_t group) { return (K + group - 1) / group; }

// Zero points are unsigned int4: a byte above 15 is refused, naming the first.
void check_zero_points(const TensorView& zp) {
  const auto* v = static_cast<const uint8_t*>(zp.data);
  const int64_t groups = zp.shape.at(1), count = zp.shape.at(0) * groups;
  for (int64_t i = 0; i < count; ++i) {
    if (v[i] > 15) {
      fail(Errc::invalid_argument,
           "int4_gemm: zero_points[{}, {}] = {}: must be in [0, 15] (an unsigned int4 zero point, as npukit quantize "
           "writes them)",
           i / groups, i % groups, v[i]);
    }
  }
}

void check(const Call& call) {
  const int64_t K = call.dim("K"), group = call.params.integer("group");
  if (group != 32 && group != 64 && group != 128) {
    fail(Errc::invalid_argument,
         "int4_gemm: parameter group={}: must be 32, 64 or 128 (the groups of npukit quantize --scheme int4-group:G)",
         group);
  }
  const int64_t k_bytes = call.dim("K_bytes"), groups = call.dim("groups");
  if (k_bytes != (K + 1) / 2) {
    fail(Errc::invalid_argument,
         "int4_gemm: w has {} bytes per row, but K = {} packs into {} (two int4 per byte, low nibble = even k)", k_bytes,
         K, (K + 1) / 2);
  }
  if (groups != groups_for(K, group)) {
    fail(Errc::invalid_argument, "int4_gemm: scales have {} groups per row, but K = {} in groups of group={} needs {}",
         groups, K, group, groups_for(K, group));
  }
  const bool int8 = call.tensor("a").dtype == DType::int8;
  if (!int8 && call.tensors.count("a_scales")) {
    fail(Errc::invalid_argument, "int4_gemm: input a_scales (per-row activation scales) applies to int8 a only (a is {})",
         dtype_name(call.tensor("a").dtype));
  }
  // A prepared op's constant zero points were checked when they were packed.
  if (call.tensors.count("zero_points") && call.packed_constant<PackedZeroPoints>("zero_points") == nullptr) {
    check_zero_points(call.tensor("zero_points"));
  }
}

// Without zero points every nibble is two's complement: XOR 8 makes it q + 8, and a zero
// point of 8 everywhere takes the 8 back out. The kernels read these 16 bytes for every group
// of every channel block (strides 0).
const uint8_t kEights[Int4Layout::kLanes] = {8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8};

template <bool Gpu>
void int4_gemm_run(const Call& call) {
  const TensorView& a = call.tensor("a");
  const TensorView& y = call.tensor("y");
  const int64_t M = call.dim("M"), N = call.dim("N"), K = call.dim("K");
  const int64_t group = call.params.integer("group"), groups = call.dim("groups");
  const Int4Layout l = Int4Layout::of(N, call.dim("K_bytes"));
  ScratchFrame frame(call);

  // A prepared op's constants are packed already; on a GPU they are read from the device
  // copies their first run made (gpu_resident). A plain call packs each one here.
  const uint8_t* w = nullptr;
  if (const auto* p = call.packed_constant<layouts::PackedInt4Weights>("w")) {
    w = p->data.get();
  } else {
    uint8_t* packed = frame.take<uint8_t>(l.weight_bytes());
    layouts::pack_int4_weights(static_cast<const uint8_t*>(call.tensor("w").data), l, packed);
    w = packed;
  }
  const float* scales = nullptr;
  if (const auto* p = call.packed_constant<PackedScales>("scales")) {
    scales = p->data.data();
  } else {
    const TensorView& s = call.tensor("scales");
    float* packed = frame.take<float>(l.group_values(groups));
    layouts::pack_int4_scales(s.data, s.dtype == DType::float16, l, groups, packed);
    scales = packed;
  }
  const bool asym = call.tensors.count("zero_points") > 0;
  const int64_t blocks = l.n_pad / Int4Layout::kLanes;
  // The 16 eights once where the kernels read them (on a GPU one 16-byte upload: a host view
  // with zero strides would be copied once per channel block and group).
  RunScratch scratch(call, frame);
  TensorView zp = RunScratch::broadcast(
      scratch.copy_of({const_cast<uint8_t*>(kEights), DType::uint8, {Int4Layout::kLanes}, {}}), {blocks, groups});
  if (asym) {
    zp.strides.clear();
    zp.memory = TensorView::Memory::host;
    if (const auto* p = call.packed_constant<PackedZeroPoints>("zero_points")) {
      zp.data = const_cast<uint8_t*>(p->data.data());
    } else {
      uint8_t* packed = frame.take<uint8_t>(l.group_values(groups));
      layouts::pack_int4_zero_points(static_cast<const uint8_t*>(call.tensor("zero_points").data), l, groups, packed);
      zp.data = packed;
    }
  }
  // The CPU kernels read whole groups of a: zero past K (where the nibbles are padding). The
  // GPU kernels read zeros there themselves: `a` goes as the caller holds it.
  const int64_t k_read = groups * group;
  TensorView a_read = a;
  if (!Gpu && k_read != K) {
    const size_t es = dtype_size(a.dtype);
    auto* padded = frame.take<uint8_t>(static_cast<size_t>(M * k_read) * es);
    std::memset(padded, 0, static_cast<size_t>(M * k_read) * es);
    for (int64_t m = 0; m < M; ++m) {
      std::memcpy(padded + m * k_read * es, static_cast<const uint8_t*>(a.data) + m * K * es, static_cast<size_t>(K) * es);
    }
    a_read = TensorView{padded, a.dtype, {M, k_read}, {}};
  }
  const bool int8 = a.dtype == DType::int8;
  // The per-row scales as the caller passed them (host or device), else ones (the float
  // kernels never read them).
  auto a_scales = find_name(call.tensors, "a_scales");
  const TensorView as_view = a_scales != call.tensors.end()
                                 ? a_scales->second
                                 : TensorView{frame.fill(static_cast<size_t>(int8 ? M : 1), 1.0f), DType::float32,
                                              {int8 ? M : 1}, {}};
  // The CPU's float kernels read each channel's 4 bytes of a k block as one int32 word
  // (runtime/operators.cmake, ops/int4_gemm.h).
  const bool words = !Gpu && a.dtype != DType::int8;
  TensorView w_view{const_cast<uint8_t*>(w), words ? DType::int32 : DType::uint8,
                    {blocks, l.k_pad / 8, Int4Layout::kLanes, words ? 1 : 4}, {}};
  TensorView s_view{const_cast<float*>(scales), DType::float32, {blocks, groups, Int4Layout::kLanes}, {}};
  if (Gpu) {  // each the constant's own memory when there is one, else left as it is
    w_view = gpu_resident(call, "w", w_view);
    s_view = gpu_resident(call, "scales", s_view);
    zp = gpu_resident(call, "zero_points", zp);
  }
  const uint8_t nibble_xor = asym ? 0 : 0x88;
  const int32_t g = static_cast<int32_t>(group);
  const bool f16_out = y.dtype == DType::float16;
  auto run = [&](const auto& kernel) {
    call_kernel(kernel, call, In{a_read}, In{w_view}, In{s_view}, In{zp}, In{as_view}, nibble_xor, g, Out{y});
  };
  switch (a.dtype) {
    case DType::int8:
      f16_out ? run(NPUKIT_TABLE(Gpu, int4_gemm_i8_f16)) : run(NPUKIT_TABLE(Gpu, int4_gemm_i8_f32));
      break;
    case DType::float16:
      f16_out ? run(NPUKIT_TABLE(Gpu, int4_gemm_f16_f16)) : run(NPUKIT_TABLE(Gpu, int4_gemm_f16_f32));
      break;
    default:
      f16_out ? run(NPUKIT_TABLE(Gpu, int4_gemm_f32_f16)) : run(NPUKIT_TABLE(Gpu, int4_gemm_f32_f32));
      break;
  }
}

OpSpec make_spec() {
  OpSpec op;
  op.name = "int4_gemm";
  op.summary =
      "y = a * w'^T, w' = scales * (q - zero_points) per group of k: int4 weights packed two per byte as npukit "
      "quantize --scheme int4-group:G writes them";
  TensorSpec a{"a", TensorSpec::Role::input, {"M", "K"}, {DType::int8, DType::float32, DType::float16}, ""};
  // Read on the host by a plain call, which packs them there (a prepared op packs them once
  // and keeps them on the device); zero points are checked there too.
  TensorSpec w{"w", TensorSpec::Role::input, {"N", "K_bytes"}, {DType::uint8}, ""};
  TensorSpec scales{"scales", TensorSpec::Role::input, {"N", "groups"}, {DType::float32, DType::float16}, ""};
  TensorSpec zero_points{"zero_points", TensorSpec::Role::input, {"N", "groups"}, {DType::uint8}, ""};
  zero_points.optional = true;
  w.host_data = scales.host_data = zero_points.host_data = true;
  TensorSpec a_scales{"a_scales", TensorSpec::Role::input, {"M"}, {DType::float32}, ""};
  a_scales.optional = true;
  TensorSpec y{"y", TensorSpec::Role::output, {"M", "N"}, {DType::float32, DType::float16}, ""};
  y.dtype_param = "out";
  op.tensors = {a,
                w,
                scales,
                zero_points,
                a_scales,
                y};
  op.params = {
      {"group", ParamSpec::Kind::integer, "32", 32, 128, {}, "k per scale (and zero point): 32, 64 or 128"},
      {"out", ParamSpec::Kind::choice, "float32", 0, 0, {"float32", "float16"}, "output dtype"},
  };
  op.check = check;
  op.constants["w"] = [](const TensorView& t) {
    auto p = std::make_shared<const layouts::PackedInt4Weights>(
        layouts::pack_int4_weights(static_cast<const uint8_t*>(t.data), t.shape.at(0), t.shape.at(1)));
    return PackedConstant{p, p->data.get()};
  };
  // Scales and zero points packed for the channel blocks; their K (the groups) is checked
  // against a's on every run, like the tensors'.
  op.constants["scales"] = [](const TensorView& t) {
    auto p = std::make_shared<PackedScales>();
    p->layout = Int4Layout::of(t.shape.at(0), 0);
    p->groups = t.shape.at(1);
    p->data.resize(p->layout.group_values(p->groups));
    layouts::pack_int4_scales(t.data, t.dtype == DType::float16, p->layout, p->groups, p->data.data());
    return PackedConstant{std::shared_ptr<const PackedScales>(p), p->data.data()};
  };
  op.constants["zero_points"] = [](const TensorView& t) {
    check_zero_points(t);
    auto p = std::make_shared<PackedZeroPoints>();
    p->layout = Int4Layout::of(t.shape.at(0), 0);
    p->groups = t.shape.at(1);
    p->data.resize(p->layout.group_values(p->groups));
    layouts::pack_int4_zero_points(static_cast<const uint8_t*>(t.data), p->layout, p->groups, p->data.data());
    return PackedConstant{std::shared_ptr<const PackedZeroPoints>(p), p->data.data()};
  };
  op.kernels = {{"cpu", int4_gemm_run<false>}, {"gpu-opencl", int4_gemm_run<true>}, {"gpu-cuda", int4_gemm_run<true>}};
  op.cpu_tiers = {"avx512_vnni", "avx512", "avx2", "sse41"};
  op.cuda_tensors = true;  // a, y and a_scales without copies; the host_data tensors above copied back
  return op;
}

}  // namespace

const OpSpec& int4_gemm_spec() {
  static const OpSpec spec = make_spec();
  return spec;
}

}  // namespace npukit
