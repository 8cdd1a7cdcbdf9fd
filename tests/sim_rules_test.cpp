// The NPU rules on hand-written analyses: each rule fires with the right numbers and a
// concrete fix, stays quiet when the schedule satisfies it, and --strict turns warnings
// into errors.
#include <gtest/gtest.h>

#include "simulator/rules/rules.h"
#include "sim_test_fixtures.h"

namespace npukit::sim {
namespace {

using testing::allocation;
using testing::decode_gemv;
using testing::matrix_work;
using testing::transfer;

std::vector<Violation> of_rule(const std::vector<Violation>& all, const std::string& rule) {
  std::vector<Violation> out;
  for (const Violation& v : all)
    if (v.rule == rule) out.push_back(v);
  return out;
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// An int8 GEMM tile that fits edge-6tops exactly: 8×4×32 (m0×n0×k0), aligned transfers.
OpAnalysis clean_gemm() {
  OpAnalysis a;
  a.op = "int8_gemm";
  a.shape = {{"M", 64}, {"N", 64}, {"K", 256}};
  a.tile_loop = "t";
  a.tiles = 16;
  a.allocations = {allocation("A_sram", "sram", 64 * 256, true), allocation("B_sram", "sram", 256 * 16, true),
                   allocation("C_acc", "acc", 64 * 16 * 4, false, {Unit::vector, Unit::dma})};
  a.transfers = {transfer("A_sram", "A", Direction::in, "t", 16, 64 * 256, true, "sram"),
                 transfer("B_sram", "B", Direction::in, "t", 16, 256 * 16, true, "sram"),
                 transfer("C_acc", "C", Direction::out, "t", 16, 64 * 16 * 4, true, "acc")};
  a.matrix = {matrix_work("C", Dtype::int8, 16, 64, 16, 256)};
  VectorWork v;
  v.func = "C_requant", v.buffer = "acc", v.dtype = Dtype::fp32, v.lanes = 8, v.access_alignment = 64;
  v.ops = {{VectorOp::mul, 4096}};
  a.vector = {v};
  return a;
}

TEST(SimRules, CleanScheduleHasNoViolations) {
  const auto v = check_rules(clean_gemm(), preset("edge-6tops"), true);
  for (const Violation& x : v) ADD_FAILURE() << x.rule << ": " << x.message;
  EXPECT_TRUE(v.empty());
}

TEST(SimRules, MatrixTileNotAMultipleOfK0ReportsPaddingAndMultiples) {
  OpAnalysis a = clean_gemm();
  a.matrix = {matrix_work("C", Dtype::int8, 16, 64, 16, 24)};
  const auto v = of_rule(check_rules(a, preset("edge-6tops"), false), "matrix_tile");
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].op, "int8_gemm");
  EXPECT_EQ(v[0].func, "C");
  EXPECT_EQ(v[0].loop, "k.ki");
  EXPECT_EQ(v[0].value, 24);
  EXPECT_EQ(v[0].limit, 32);
  EXPECT_EQ(v[0].severity, Violation::warning);
  EXPECT_TRUE(has(v[0].message, "K tile 24 is not a multiple of k0 = 32 for int8")) << v[0].message;
  EXPECT_TRUE(has(v[0].message, "25% of MACs would be padding")) << v[0].message;
  EXPECT_TRUE(has(v[0].suggestion, "use 32 or 64")) << v[0].suggestion;
}

TEST(SimRules, MatrixTileSuggestsTheMultiplesAroundTheExtent) {
  OpAnalysis a = clean_gemm();
  a.matrix = {matrix_work("C", Dtype::int8, 16, 64, 6, 40)};  // n0 = 4, k0 = 32
  const auto v = of_rule(check_rules(a, preset("edge-6tops"), false), "matrix_tile");
  ASSERT_EQ(v.size(), 2u);
  EXPECT_TRUE(has(v[0].message, "N tile 6")) << v[0].message;
  EXPECT_TRUE(has(v[0].message, "25%")) << v[0].message;  // 6 of 8
  EXPECT_TRUE(has(v[0].suggestion, "use 4 or 8")) << v[0].suggestion;
  EXPECT_TRUE(has(v[1].message, "37.5%")) << v[1].message;  // 40 of 64
  EXPECT_TRUE(has(v[1].suggestion, "use 32 or 64")) << v[1].suggestion;
}

TEST(SimRules, GemvRowOnACubeIsMostlyPadding) {
  const auto v = of_rule(check_rules(decode_gemv(), preset("edge-6tops"), false), "matrix_tile");
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].value, 1);
  EXPECT_EQ(v[0].limit, 8);
  EXPECT_TRUE(has(v[0].message, "87.5%")) << v[0].message;
  EXPECT_TRUE(has(v[0].suggestion, "no loop over M")) << v[0].suggestion;
}

TEST(SimRules, SystolicTilesFollowTheDataflow) {
  const ArchSpec ws = testing::make_arch("sys", testing::systolic(16, 16, "ws"));
  OpAnalysis a = clean_gemm();
  a.allocations.clear(), a.transfers.clear(), a.vector.clear();
  a.matrix = {matrix_work("C", Dtype::int8, 1, 5, 16, 20)};  // WS: K on rows, N on cols; M streams
  auto v = of_rule(check_rules(a, ws, false), "matrix_tile");
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].value, 20);
  EXPECT_EQ(v[0].limit, 16);
  EXPECT_TRUE(has(v[0].message, "rows = 16")) << v[0].message;
  const ArchSpec os = testing::make_arch("sys", testing::systolic(16, 16, "os"));
  v = of_rule(check_rules(a, os, false), "matrix_tile");  // OS: M on rows
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].value, 5);
}

TEST(SimRules, ExplicitPaddingIsReported) {
  OpAnalysis a = clean_gemm();
  a.matrix[0].useful_macs = a.matrix[0].useful_macs * 3 / 4;
  const auto v = of_rule(check_rules(a, preset("edge-6tops"), false), "matrix_padding");
  ASSERT_EQ(v.size(), 1u);
  EXPECT_TRUE(has(v[0].message, "25% are explicit padding")) << v[0].message;
  EXPECT_EQ(v[0].severity, Violation::warning);
}

TEST(SimRules, UnsupportedDtypeIsAnError) {
  OpAnalysis a = clean_gemm();
  a.matrix = {matrix_work("C", Dtype::fp32, 16, 64, 16, 256)};
  const auto all = check_rules(a, preset("edge-6tops"), false);
  const auto v = of_rule(all, "matrix_dtype");
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].severity, Violation::error);
  EXPECT_TRUE(has(v[0].message, "fp32")) << v[0].message;
  EXPECT_TRUE(has(v[0].suggestion, "int8, fp16")) << v[0].suggestion;
  EXPECT_TRUE(of_rule(all, "matrix_tile").empty());  // no tile rule for a dtype without a shape
}

TEST(SimRules, BufferCapacityCountsDoubleBuffersTwiceAndNamesTheFix) {
  OpAnalysis a = clean_gemm();
  a.allocations = {allocation("W_sram", "sram", 131072, true), allocation("X_sram", "sram", 196608, false)};
  const auto v = of_rule(check_rules(a, preset("edge-6tops"), false), "buffer_capacity");
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].value, 458752);
  EXPECT_EQ(v[0].limit, 393216);
  EXPECT_EQ(v[0].func, "W_sram");  // the largest footprint: 2 × 128 KiB
  EXPECT_EQ(v[0].severity, Violation::error);
  EXPECT_TRUE(has(v[0].message, "65536 B over")) << v[0].message;
  EXPECT_TRUE(has(v[0].message, "W_sram 2x131072 B")) << v[0].message;
  EXPECT_TRUE(has(v[0].suggestion, "halve W_sram's tile")) << v[0].suggestion;
  EXPECT_TRUE(has(v[0].suggestion, "saves 131072 B")) << v[0].suggestion;
  EXPECT_TRUE(has(v[0].suggestion, "stop double-buffering W_sram")) << v[0].suggestion;
}

TEST(SimRules, BufferCapacityExactFitPassesAndAlignmentRoundsUp) {
  OpAnalysis a = clean_gemm();
  a.allocations = {allocation("W_sram", "sram", 131072, true), allocation("X_sram", "sram", 131072, false)};
  EXPECT_TRUE(of_rule(check_rules(a, preset("edge-6tops"), false), "buffer_capacity").empty());
  // acc: 64 KiB, 64-byte alignment: 1024 allocations of 33 B occupy 64 B each = 64 KiB.
  a.allocations.clear();
  for (int i = 0; i < 1024; ++i) a.allocations.push_back(allocation("t" + std::to_string(i), "acc", 33, false));
  EXPECT_TRUE(of_rule(check_rules(a, preset("edge-6tops"), false), "buffer_capacity").empty());
  a.allocations.push_back(allocation("one_more", "acc", 1, false));
  const auto v = of_rule(check_rules(a, preset("edge-6tops"), false), "buffer_capacity");
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].value, 65536 + 64);
}

TEST(SimRules, UnknownBufferListsTheArchBuffers) {
  OpAnalysis a = clean_gemm();
  a.allocations[0].buffer = "L0A";
  a.transfers[0].buffer = "L0A";  // same (func, buffer): reported once
  const auto v = of_rule(check_rules(a, preset("edge-6tops"), false), "buffer_unknown");
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].func, "A_sram");
  EXPECT_TRUE(has(v[0].message, "'L0A'")) << v[0].message;
  EXPECT_TRUE(has(v[0].suggestion, "sram (393216 B")) << v[0].suggestion;
  EXPECT_TRUE(has(v[0].suggestion, "acc (65536 B")) << v[0].suggestion;
}

TEST(SimRules, BufferReaderMustBeAllowed) {
  // Ascend-like: L1 is read only by DMA; the cube reads L0A/L0B/L0C.
  OpAnalysis a;
  a.op = "int8_gemm";
  a.allocations = {allocation("A_l1", "L1", 4096, false, {Unit::matrix}), allocation("A_l0a", "L0A", 4096, false, {Unit::matrix})};
  const auto v = of_rule(check_rules(a, preset("ascend-910b-like"), false), "buffer_reader");
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].func, "A_l1");
  EXPECT_TRUE(has(v[0].message, "matrix unit reads A_l1 from buffer L1, but L1 is read only by dma")) << v[0].message;
  EXPECT_TRUE(has(v[0].suggestion, "L0A, L0B, L0C")) << v[0].suggestion;
}

TEST(SimRules, DmaBaseAndRowAlignment) {
  OpAnalysis a = clean_gemm();
  Transfer t = transfer("A_sram", "A", Direction::in, "t", 16, 100, true, "sram");
  t.base_alignment = 16;
  a.transfers = {t};
  const auto v = of_rule(check_rules(a, preset("edge-6tops"), false), "dma_alignment");
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[0].value, 16);  // base
  EXPECT_EQ(v[0].limit, 32);
  EXPECT_EQ(v[0].severity, Violation::error);
  EXPECT_TRUE(has(v[0].message, "aligned to 16 B, but DMA engine dma_in needs 32 B")) << v[0].message;
  EXPECT_EQ(v[1].value, 100);  // run length vs alignment
  EXPECT_EQ(v[1].severity, Violation::error);
  EXPECT_TRUE(has(v[1].suggestion, "96 or 128 B")) << v[1].suggestion;
  EXPECT_EQ(v[2].limit, 256);  // run length vs burst
  EXPECT_EQ(v[2].severity, Violation::warning);
  EXPECT_TRUE(has(v[2].message, "60.9% of burst bytes are wasted")) << v[2].message;  // 156 of 256
}

// edge-6tops with a store engine that has no byte enables: every store must be aligned.
ArchSpec without_partial_writes(const std::string& name) {
  ArchSpec arch = preset(name);
  for (DmaEngine& e : arch.dma) e.partial_writes = false;
  return arch;
}

TEST(SimRules, DmaBurstWasteAndStrides) {
  OpAnalysis a = clean_gemm();
  Transfer t = transfer("A_sram", "A", Direction::out, "t", 16, 288, true, "sram");
  a.transfers = {t};
  const ArchSpec edge = without_partial_writes("edge-6tops");
  auto v = of_rule(check_rules(a, edge, false), "dma_alignment");
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].severity, Violation::warning);
  EXPECT_TRUE(has(v[0].message, "2 bursts of 256 B on dma_out: 43.8% of burst bytes are wasted")) << v[0].message;
  // Strided rows: 32 rows of 256 B, 4100 B apart: rows after the first start 4-byte aligned.
  t.rows = 32, t.row_bytes = 256, t.stride_bytes = 4100;
  a.transfers = {t};
  v = of_rule(check_rules(a, edge, false), "dma_alignment");
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].value, 4);
  // Rows back to back form one contiguous run: only the total must align.
  t.rows = 3, t.row_bytes = 96, t.stride_bytes = 96;
  a.transfers = {t};
  v = of_rule(check_rules(a, edge, false), "dma_alignment");
  ASSERT_EQ(v.size(), 1u);  // 288 B: aligned, but 2 partial bursts
  EXPECT_EQ(v[0].value, 288);
}

// A 4-byte store (decode's one scale) and 12-byte stores at 4-byte offsets (a prefill's
// per-tile scales): errors for an engine without byte enables, legal for one with them
// (edge-6tops' dma_out: AXI WSTRB), whose cost model charges the 32 B units they touch.
TEST(SimRules, ShortStoresNeedPartialWrites) {
  OpAnalysis a = clean_gemm();
  Transfer t = transfer("s_buf", "scale", Direction::out, "", 1, 4, false, "sram");
  a.transfers = {t};
  auto v = of_rule(check_rules(a, without_partial_writes("edge-6tops"), false), "dma_alignment");
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].severity, Violation::error);
  EXPECT_TRUE(has(v[0].message, "each contiguous run is 4 B, not a multiple of DMA engine dma_out's 32 B alignment"))
      << v[0].message;
  // With byte enables: legal; and issued once as one run, no tiling could lengthen it, so
  // its burst (252 of 256 B unused, charged by the cost model) is no warning either.
  EXPECT_TRUE(check_rules(a, preset("edge-6tops"), true).empty());

  t = transfer("s_buf", "scale", Direction::out, "t", 16, 12, false, "sram");
  t.base_alignment = 4;
  a.transfers = {t};
  v = of_rule(check_rules(a, without_partial_writes("edge-6tops"), false), "dma_alignment");
  ASSERT_EQ(v.size(), 3u);  // base, run, burst
  EXPECT_EQ(v[0].value, 4);
  EXPECT_EQ(v[0].severity, Violation::error);
  v = of_rule(check_rules(a, preset("edge-6tops"), false), "dma_alignment");
  ASSERT_EQ(v.size(), 1u);  // only the burst waste, which a larger tile could cut
  EXPECT_EQ(v[0].severity, Violation::warning);
  EXPECT_TRUE(has(v[0].message, "each 12 B run takes 1 burst of 256 B")) << v[0].message;
  // Declared short by the op's nature (NpuPlan::short_runs): no warning, same cost.
  a.transfers[0].short_runs = "4 B of scale per row";
  EXPECT_TRUE(check_rules(a, preset("edge-6tops"), true).empty());
  // Loads have no byte enables: a 12-byte load at a 4-byte offset stays an error, declared or not.
  a.transfers[0].direction = Direction::in;
  v = of_rule(check_rules(a, preset("edge-6tops"), false), "dma_alignment");
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0].severity, Violation::error);
  EXPECT_EQ(v[1].severity, Violation::error);
}

TEST(SimRules, VectorAccessAlignment) {
  OpAnalysis a = clean_gemm();
  a.vector[0].buffer = "sram";
  a.vector[0].access_alignment = 16;
  const auto v = of_rule(check_rules(a, preset("edge-6tops"), false), "vector_alignment");
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].value, 16);
  EXPECT_EQ(v[0].limit, 32);
  EXPECT_TRUE(has(v[0].suggestion, "multiples of 8 fp32 elements")) << v[0].suggestion;
  a.vector[0].access_alignment = 32;
  EXPECT_TRUE(of_rule(check_rules(a, preset("edge-6tops"), false), "vector_alignment").empty());
}

TEST(SimRules, StrictTurnsWarningsIntoErrors) {
  OpAnalysis a = clean_gemm();
  a.matrix = {matrix_work("C", Dtype::int8, 16, 64, 16, 24)};
  const auto lax = check_rules(a, preset("edge-6tops"), false);
  const auto strict = check_rules(a, preset("edge-6tops"), true);
  ASSERT_EQ(lax.size(), 1u);
  ASSERT_EQ(strict.size(), 1u);
  EXPECT_EQ(count_errors(lax), 0);
  EXPECT_EQ(count_errors(strict), 1);
  EXPECT_EQ(strict[0].message, lax[0].message);
}

}  // namespace
}  // namespace npukit::sim
