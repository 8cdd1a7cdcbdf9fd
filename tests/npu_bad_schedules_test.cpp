// One deliberately bad NPU schedule per rule (docs/simulator/rules.md), each a small Halide
// pipeline built here with NpuPipeline/NpuPlan and read by the simulator's own lowering
// pass: each must yield exactly its intended diagnostic (rule, Func, loop, value, limit,
// the fix's numbers) and no other, pointing at the line of the NpuPlan call that made it.
// A rule that stays quiet, or fires on the wrong statement, fails here.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "simulator/analysis/lowered_nest.h"
#include "simulator/rules/rules.h"

namespace npukit::sim {
namespace {

using namespace Halide;
using schedules::npu::NpuPipeline;

// The path NpuPlan records for a call in this file (repository-relative).
constexpr const char* kThisFile = "tests/npu_bad_schedules_test.cpp";

// Lowering only (no code is generated or run), so a fixed target keeps the nest the same
// on every machine.
Target lowering_target() { return Target("x86-64-linux-avx2-no_asserts-no_bounds_query"); }

// The rules' verdict on `p` with every input and output bound as a dense tensor of the
// given extents (innermost first), on `arch`, not strict.
std::vector<Violation> violations_of(NpuPipeline& p, const std::map<std::string, std::vector<int64_t>>& extents,
                                     const ArchSpec& arch) {
  const Internal::Stmt nest = capture_lowered_nest(p, lowering_target());
  Bindings env;
  for (const ImageParam& in : p.inputs) bind_dense_buffer(env, in.name(), extents.at(in.name()));
  for (const NpuPipeline::Output& o : p.outputs) bind_dense_buffer(env, o.func, extents.at(o.tensor));
  return check_rules(analyse_nest(nest, p.plan, p.op, p.output_funcs(), env), arch, false);
}

std::string all_messages(const std::vector<Violation>& vs) {
  std::string s;
  for (const Violation& v : vs) s += "\n  " + v.source.text() + ": [" + v.rule + "] " + v.message + " -- " + v.suggestion;
  return s;
}

// y(n, m) = Σ_k a(k, m)·w(k, n) in operand type `t`, scheduled as the int8_gemm NPU
// schedule is: output tiles [tm, tn] with N tiles outermost, K in chunks of tk. Where each
// tile lives is left to each test's NpuPlan calls: that is what the tests get wrong.
struct Gemm {
  ImageParam a, w;  // (k, m), (k, n)
  Var k{"k"}, m{"m"}, n{"n"}, no{"no"}, ni{"ni"}, mo{"mo"}, mi{"mi"};
  RVar ro{"ro"}, ri{"ri"};
  Func a_tile{"a_tile"}, w_tile{"w_tile"}, acc{"acc"}, y{"y"};
  NpuPipeline p;

  Gemm(const std::string& op, Type t, int tm, int tn, int tk) : a(t, 2, "a"), w(t, 2, "w") {
    p.op = op;
    const Type acc_type = t.is_float() ? Float(32) : Int(32);
    a_tile(k, m) = a(k, m);
    w_tile(k, n) = w(k, n);
    RDom r(0, a.dim(0).extent(), "r");
    acc(n, m) = cast(acc_type, 0);
    acc(n, m) += cast(acc_type, a_tile(r, m)) * cast(acc_type, w_tile(r, n));
    y(n, m) = acc(n, m);
    y.split(n, no, ni, tn, TailStrategy::GuardWithIf)
        .split(m, mo, mi, tm, TailStrategy::GuardWithIf)
        .reorder(ni, mi, mo, no);
    acc.update().split(r.x, ro, ri, tk, TailStrategy::GuardWithIf).reorder(ri, n, m, ro);
    p.inputs = {a, w};
  }
  LoopLevel k_chunk() const { return LoopLevel(acc, ro); }
  LoopLevel out_tile() const { return LoopLevel(y, mo); }
  std::vector<Expr> whole() const { return {a.dim(1).extent(), w.dim(1).extent(), a.dim(0).extent()}; }
  std::vector<Violation> check(const ArchSpec& arch, int64_t M, int64_t N, int64_t K) {
    p.finish({y}, {"y"});
    return violations_of(p, {{"a", {K, M}}, {"w", {K, N}}, {"y", {N, M}}}, arch);
  }
};

// The one violation of `vs` (a copy: callers pass temporaries), or a failure listing all.
Violation only(const std::vector<Violation>& vs) {
  EXPECT_EQ(vs.size(), 1u) << "expected exactly one violation:" << all_messages(vs);
  return vs.empty() ? Violation{} : vs.front();
}

void expect_source(const Violation& v, int line) {
  EXPECT_EQ(v.source.file, kThisFile);
  EXPECT_EQ(v.source.line, line) << v.source.text();
}

// y(i) = x(i + offset): a copy that skips a header of `offset` bytes, in tiles of 256 B
// staged by DMA. Where the tile lives is left to the test.
struct SkipHeader {
  ImageParam x{Int(8), 1, "x"};
  Var i{"i"}, io{"io"}, ii{"ii"};
  Func x_tile{"x_tile"}, y{"y"};
  NpuPipeline p;
  int offset;

  explicit SkipHeader(int header) : offset(header) {
    p.op = "skip_header";
    x_tile(i) = x(i + offset);
    y(i) = x_tile(i);
    y.split(i, io, ii, 256, TailStrategy::GuardWithIf);
    p.inputs = {x};
  }
  LoopLevel tile() const { return LoopLevel(y, io); }
  std::vector<Violation> check(const ArchSpec& arch, int64_t N) {
    p.finish({y}, {"y"});
    return violations_of(p, {{"x", {N + offset}}, {"y", {N}}}, arch);
  }
};

// Skipping 16 B: every 256 B tile starts at 16 + 256·i, and edge-6tops's dma_in needs
// 32 B-aligned addresses. Runs are whole 256 B bursts and the store side is aligned, so
// nothing else is wrong.
TEST(NpuBadSchedules, MisalignedDmaBase) {
  SkipHeader c(16);
  const int line = __LINE__; c.p.plan.stage(c.x_tile, "sram", c.tile(), false, true);
  const Violation v = only(c.check(preset("edge-6tops"), 1024));
  EXPECT_EQ(v.rule, "dma_alignment");
  EXPECT_EQ(v.severity, Violation::error);
  EXPECT_EQ(v.func, "x_tile");
  EXPECT_EQ(v.loop, "y.s0.i.io");
  EXPECT_EQ(v.value, 16);
  EXPECT_EQ(v.limit, 32);
  EXPECT_EQ(v.message, "transfer x -> x_tile: DRAM addresses are aligned to 16 B, but DMA engine dma_in needs 32 B");
  EXPECT_EQ(v.suggestion,
            "start every tile and row at a multiple of 32 B: tile offsets and row strides in multiples of 32 "
            "elements of 1 B, or pad the tensor's rows to 32 B");
  expect_source(v, line);
}

// K tiles of 48 on edge-6tops's int8 cube (k0 = 32): padded to 64, a quarter of the MACs
// idle. K = 48 is the whole of K, so every DMA run is whole rows (16·48 = 768 B, three
// bursts): only the tile is wrong.
TEST(NpuBadSchedules, KTileNotAMultipleOfK0) {
  Gemm g("k_tile_48", Int(8), 16, 64, 48);
  g.p.plan.stage(g.acc, "acc", g.out_tile());
  g.p.plan.stage(g.a_tile, "sram", g.k_chunk(), false, true);
  g.p.plan.stage(g.w_tile, "sram", g.k_chunk(), false, true);
  const int line = __LINE__; g.p.plan.matrix(g.acc, 1, "m", "n", "ri", Dtype::int8, g.whole());
  const Violation v = only(g.check(preset("edge-6tops"), 16, 64, 48));
  EXPECT_EQ(v.rule, "matrix_tile");
  EXPECT_EQ(v.severity, Violation::warning);
  EXPECT_EQ(v.func, "acc");
  EXPECT_EQ(v.loop, "acc.s1.r$x.ri");
  EXPECT_EQ(v.value, 48);
  EXPECT_EQ(v.limit, 32);
  EXPECT_EQ(v.message, "K tile 48 is not a multiple of k0 = 32 for int8: 25% of MACs would be padding");
  EXPECT_EQ(v.suggestion, "use 32 or 64 for the K tile (loop acc.s1.r$x.ri)");
  expect_source(v, line);
}

// Double-buffering a whole 256x768 int8 weight tile in edge-6tops's 384 KiB SRAM: two
// copies (2 x 196608 B) and the activation tile (8 x 256 B) are 2048 B too many; one copy
// would fit.
TEST(NpuBadSchedules, OverCapacityDoubleBuffer) {
  Gemm g("double_buffered_weights", Int(8), 8, 768, 256);
  g.p.plan.stage(g.acc, "acc", g.out_tile());
  g.p.plan.stage(g.a_tile, "sram", g.k_chunk(), false, true);
  const int line = __LINE__; g.p.plan.stage(g.w_tile, "sram", g.k_chunk(), true, true);
  g.p.plan.matrix(g.acc, 1, "m", "n", "ri", Dtype::int8, g.whole());
  const Violation v = only(g.check(preset("edge-6tops"), 8, 768, 256));
  EXPECT_EQ(v.rule, "buffer_capacity");
  EXPECT_EQ(v.severity, Violation::error);
  EXPECT_EQ(v.func, "w_tile");
  EXPECT_EQ(v.loop, "acc.s1.r$x.ro");
  EXPECT_EQ(v.value, 2 * 196608 + 2048);
  EXPECT_EQ(v.limit, 393216);
  EXPECT_EQ(v.message, "buffer sram needs 395264 B live, 2048 B over its 393216 B: w_tile 2x196608 B + a_tile 2048 B");
  EXPECT_EQ(v.suggestion,
            "halve w_tile's tile (loop acc.s1.r$x.ro): saves 196608 B; or stop double-buffering w_tile: saves "
            "196608 B but exposes its transfers");
  expect_source(v, line);
}

// The activation tile left in Ascend's L1, which only the DMA engines read: the cube reads
// its operands from L0A/L0B. Shapes are whole fractals and whole 512 B bursts.
TEST(NpuBadSchedules, MatrixUnitReadsABufferItCannot) {
  Gemm g("operand_in_l1", Int(8), 16, 64, 512);
  g.p.plan.stage(g.acc, "L0C", g.out_tile());
  const int line = __LINE__; g.p.plan.stage(g.a_tile, "L1", g.k_chunk(), false, true);
  g.p.plan.stage(g.w_tile, "L0B", g.k_chunk(), false, true);
  g.p.plan.matrix(g.acc, 1, "m", "n", "ri", Dtype::int8, g.whole());
  const Violation v = only(g.check(preset("ascend-910b-like"), 16, 64, 512));
  EXPECT_EQ(v.rule, "buffer_reader");
  EXPECT_EQ(v.severity, Violation::error);
  EXPECT_EQ(v.func, "a_tile");
  EXPECT_EQ(v.loop, "acc.s1.r$x.ro");
  EXPECT_EQ(v.message, "the matrix unit reads a_tile from buffer L1, but L1 is read only by dma");
  EXPECT_EQ(v.suggestion, "stage a_tile into a buffer the matrix unit reads: L0A, L0B, L0C");
  expect_source(v, line);
}

// An fp32 product given to edge-6tops's matrix unit, which multiplies int8 and fp16 only.
TEST(NpuBadSchedules, DtypeTheMatrixUnitLacks) {
  Gemm g("fp32_gemm", Float(32), 8, 64, 64);
  g.p.plan.stage(g.acc, "acc", g.out_tile());
  g.p.plan.stage(g.a_tile, "sram", g.k_chunk(), false, true);
  g.p.plan.stage(g.w_tile, "sram", g.k_chunk(), false, true);
  const int line = __LINE__; g.p.plan.matrix(g.acc, 1, "m", "n", "ri", Dtype::fp32, g.whole());
  const Violation v = only(g.check(preset("edge-6tops"), 8, 64, 64));
  EXPECT_EQ(v.rule, "matrix_dtype");
  EXPECT_EQ(v.severity, Violation::error);
  EXPECT_EQ(v.func, "acc");
  EXPECT_EQ(v.message, "matrix work acc multiplies fp32 operands, but the matrix unit of edge-6tops supports only int8, fp16");
  EXPECT_EQ(v.suggestion,
            "convert acc's operands to one of int8, fp16 (quantize or cast before the product), or compute it on the "
            "vector unit");
  expect_source(v, line);
}

// The weight tile placed in "L0B", a buffer of Ascend that edge-6tops does not have (a
// schedule written for one preset and run on another, naming buffers instead of roles).
TEST(NpuBadSchedules, UnknownBuffer) {
  Gemm g("ascend_buffer_names", Int(8), 8, 64, 256);
  g.p.plan.stage(g.acc, "acc", g.out_tile());
  g.p.plan.stage(g.a_tile, "sram", g.k_chunk(), false, true);
  const int line = __LINE__; g.p.plan.stage(g.w_tile, "L0B", g.k_chunk(), false, true);
  g.p.plan.matrix(g.acc, 1, "m", "n", "ri", Dtype::int8, g.whole());
  const Violation v = only(g.check(preset("edge-6tops"), 8, 64, 256));
  EXPECT_EQ(v.rule, "buffer_unknown");
  EXPECT_EQ(v.severity, Violation::error);
  EXPECT_EQ(v.func, "w_tile");
  EXPECT_EQ(v.loop, "acc.s1.r$x.ro");
  EXPECT_EQ(v.message, "allocation w_tile is placed in buffer 'L0B', which edge-6tops does not have");
  EXPECT_EQ(v.suggestion,
            "place w_tile in one of: sram (393216 B, read by matrix/vector/dma), acc (65536 B, read by "
            "matrix/vector/dma)");
  expect_source(v, line);
}

// A cube that reads NZ fractals, with DMA and buffers that forgive everything else: what
// is left is the fractal rule.
ArchSpec lenient_nz_cube() {
  return parse_arch_spec(
      "name: nz-cube\nclock_ghz: 1\ncores: 1\n"
      "matrix: {kind: cube, layout: nz, dtypes: [int8], shapes: {int8: {m0: 16, k0: 32, n0: 16}}}\n"
      "vector: {bytes_per_cycle: 64, cycles: {add: 1, mul: 1, fma: 1, exp: 1, rsqrt: 1, div: 1, convert: 1}}\n"
      "buffers:\n  - {name: l0, bytes: 1048576, alignment: 1, banks: 1, readers: [matrix, dma]}\n"
      "dma:\n  - {name: dma, bytes_per_cycle: 64, setup_cycles: 0, burst_bytes: 1, alignment: 1}\n"
      "dram: {bandwidth_gbps: 100, latency_ns: 0}\n",
      "nz-cube.yaml");
}

// Operand tiles declared NZ with K tiles of 24: each tile row ends 24 B into a 32 B
// fractal row. The alignment rule says so in fractal terms (besides matrix_tile's padding
// warning, which the same K tile always earns on a cube whose k0 is the fractal row).
TEST(NpuBadSchedules, KTileNotWholeNzFractals) {
  Gemm g("nz_k_tile_24", Int(8), 16, 64, 24);
  g.p.plan.stage(g.acc, "l0", g.out_tile());
  const int line = __LINE__; g.p.plan.stage(g.a_tile, "l0", g.k_chunk(), false, true);
  g.p.plan.nz(g.a_tile, 32);
  g.p.plan.stage(g.w_tile, "l0", g.k_chunk(), false, true);
  g.p.plan.matrix(g.acc, 1, "m", "n", "ri", Dtype::int8, g.whole());
  const std::vector<Violation> vs = g.check(lenient_nz_cube(), 16, 64, 96);
  ASSERT_EQ(vs.size(), 2u) << all_messages(vs);
  EXPECT_EQ(vs[0].rule, "matrix_tile");
  const Violation& v = vs[1];
  EXPECT_EQ(v.rule, "dma_alignment");
  EXPECT_EQ(v.severity, Violation::error);
  EXPECT_EQ(v.func, "a_tile");
  EXPECT_EQ(v.value, 24);
  EXPECT_EQ(v.limit, 32);
  EXPECT_EQ(v.message,
            "transfer a -> a_tile: K tile 24 is not a whole number of NZ fractals of 32 B (32 elements of 1 B): "
            "each tile row ends 24 B into a fractal row");
  EXPECT_EQ(v.suggestion, "make the K tile 32 or 64 elements, so that every tile row is whole fractal rows");
  expect_source(v, line);
}

// The same GEMMs placed well are clean: the violations above come from the one bad
// statement each, not from the shapes or the pipeline.
TEST(NpuBadSchedules, TheSameSchedulesPlacedWellAreClean) {
  {
    SkipHeader c(32);
    c.p.plan.stage(c.x_tile, "sram", c.tile(), false, true);
    const std::vector<Violation> vs = c.check(preset("edge-6tops"), 1024);
    EXPECT_TRUE(vs.empty()) << all_messages(vs);
  }
  {
    Gemm g("int8_gemm_edge", Int(8), 8, 768, 256);
    g.p.plan.stage(g.acc, "acc", g.out_tile());
    g.p.plan.stage(g.a_tile, "sram", g.k_chunk(), false, true);
    g.p.plan.stage(g.w_tile, "sram", g.k_chunk(), false, true);
    g.p.plan.matrix(g.acc, 1, "m", "n", "ri", Dtype::int8, g.whole());
    const std::vector<Violation> vs = g.check(preset("edge-6tops"), 8, 768, 256);
    EXPECT_TRUE(vs.empty()) << all_messages(vs);
  }
  {
    Gemm g("int8_gemm_ascend", Int(8), 16, 64, 512);
    g.p.plan.stage(g.acc, "L0C", g.out_tile());
    g.p.plan.stage(g.a_tile, "L0A", g.k_chunk(), false, true);
    g.p.plan.stage(g.w_tile, "L0B", g.k_chunk(), false, true);
    g.p.plan.matrix(g.acc, 1, "m", "n", "ri", Dtype::int8, g.whole());
    const std::vector<Violation> vs = g.check(preset("ascend-910b-like"), 16, 64, 512);
    EXPECT_TRUE(vs.empty()) << all_messages(vs);
  }
}

}  // namespace
}  // namespace npukit::sim
