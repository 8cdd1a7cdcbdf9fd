// The architecture spec: every preset loads and has the peak its source states; every
// validation rule fails with its exact one-line message.
#include "simulator/arch/arch_spec.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

namespace {

using namespace npukit::sim;

const std::string kValid = R"(name: edge
clock_ghz: 1.0
cores: 1
matrix:
  kind: cube
  dtypes: [int8, fp16]
  shapes:
    int8: {m0: 16, k0: 32, n0: 16}
    fp16: {m0: 16, k0: 16, n0: 16}
vector:
  bytes_per_cycle: 64
  cycles: {add: 1, mul: 1, fma: 1, exp: 4, rsqrt: 4, div: 8, convert: 1}
buffers:
  - {name: L1, bytes: 524288, alignment: 32, banks: 1, readers: [dma]}
  - {name: UB, bytes: 196608, alignment: 32, banks: 2, readers: [vector, dma]}
  - {name: L0C, bytes: 131072, alignment: 512, banks: 1, readers: [matrix, dma]}
dma:
  - {name: mte2, bytes_per_cycle: 64, setup_cycles: 100, burst_bytes: 256, alignment: 32}
  - {name: mte3, bytes_per_cycle: 32, setup_cycles: 0, burst_bytes: 256, alignment: 32}
dram:
  bandwidth_gbps: 34.1
  latency_ns: 100
)";

const std::string kSystolic = R"(
  kind: systolic
  dtypes: [int8]
  rows: 16
  cols: 32
  dataflow: os
)";

// kValid with `from` (which must occur exactly once) replaced by `to`.
std::string with(const std::string& from, const std::string& to, std::string text = kValid) {
  size_t at = text.find(from);
  if (at == std::string::npos || text.find(from, at + 1) != std::string::npos)
    throw std::logic_error("test edit '" + from + "' must match exactly once");
  return text.replace(at, from.size(), to);
}

const std::string kCube = R"(
  kind: cube
  dtypes: [int8, fp16]
  shapes:
    int8: {m0: 16, k0: 32, n0: 16}
    fp16: {m0: 16, k0: 16, n0: 16}
)";

// The message parse_arch_spec throws for `text`, or "(no error)".
std::string error_of(const std::string& text) {
  try {
    parse_arch_spec(text, "edge.yaml");
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "(no error)";
}

std::string resolve_error(const std::string& name) {
  try {
    resolve_arch(name);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(ArchSpec, ParsesAValidSpec) {
  ArchSpec s = parse_arch_spec(kValid, "edge.yaml");
  EXPECT_EQ(s.name, "edge");
  EXPECT_EQ(s.origin, "edge.yaml");
  EXPECT_EQ(s.source, "");
  EXPECT_DOUBLE_EQ(s.clock_ghz, 1.0);
  EXPECT_EQ(s.cores, 1);
  EXPECT_EQ(s.matrix.kind, MatrixKind::cube);
  EXPECT_EQ(s.matrix.macs_per_cycle(Dtype::int8), 16 * 32 * 16);
  EXPECT_EQ(s.matrix.macs_per_cycle(Dtype::fp16), 16 * 16 * 16);
  EXPECT_EQ(s.matrix.macs_per_cycle(Dtype::fp32), 0);
  EXPECT_DOUBLE_EQ(s.vector.cycles.at(VectorOp::div), 8);
  ASSERT_EQ(s.buffers.size(), 3u);
  EXPECT_EQ(s.buffers[1].banks, 2);
  EXPECT_TRUE(s.find_buffer("UB")->read_by(Unit::vector));
  EXPECT_FALSE(s.find_buffer("UB")->read_by(Unit::matrix));
  EXPECT_EQ(s.find_buffer("nope"), nullptr);
  EXPECT_EQ(s.find_dma("mte3")->setup_cycles, 0);
  EXPECT_DOUBLE_EQ(s.dram.bandwidth_gbps, 34.1);
  EXPECT_DOUBLE_EQ(s.peak_ops_per_second(Dtype::int8), 8192 * 2 * 1e9);
}

TEST(ArchSpec, ParsesASystolicSpec) {
  ArchSpec s = parse_arch_spec(with(kCube, kSystolic), "sys.yaml");
  EXPECT_EQ(s.matrix.kind, MatrixKind::systolic);
  EXPECT_EQ(s.matrix.dataflow, Dataflow::os);
  EXPECT_EQ(s.matrix.macs_per_cycle(Dtype::int8), 512);
  EXPECT_EQ(s.matrix.macs_per_cycle(Dtype::fp16), 0);
}

TEST(ArchSpec, AlignmentMustBeAPowerOfTwo) {
  EXPECT_EQ(error_of(with("alignment: 512", "alignment: 24")),
            "edge.yaml: buffers[2].alignment = 24: must be a power of two");
  EXPECT_EQ(error_of(with("alignment: 32}\n  - {name: mte3", "alignment: 0}\n  - {name: mte3")),
            "edge.yaml: dma[0].alignment = 0: must be a power of two");
}

// Issue 15's probes: values that parsed before and then gave zeros, infinities or octal.
TEST(ArchSpec, HugeLeadingZeroAndDuplicateValuesAreRefused) {
  EXPECT_EQ(error_of(with("int8: {m0: 16, k0: 32", "int8: {m0: 16, k0: 2147483648")),
            "edge.yaml: matrix.shapes.int8.k0 = 2147483648: must be at most 65536");
  EXPECT_EQ(error_of(with("bandwidth_gbps: 34.1", "bandwidth_gbps: 1e308")),
            "edge.yaml: dram.bandwidth_gbps = 1e308: must be at most 1e9 in magnitude");
  EXPECT_EQ(error_of(with("bytes: 524288", "bytes: 0100")),
            "edge.yaml: buffers[0].bytes = 0100: must be a decimal integer without leading zeros");
  EXPECT_EQ(error_of(with("bytes: 524288", "bytes: 2000000000000")),
            "edge.yaml: buffers[0].bytes = 2000000000000: must be at most 2^40 in magnitude");
  EXPECT_EQ(error_of(with("    int8: {m0: 16, k0: 32, n0: 16}\n",
                          "    int8: {m0: 16, k0: 32, n0: 16}\n    int8: {m0: 8, k0: 32, n0: 16}\n")),
            "edge.yaml: matrix.shapes.int8: duplicate key");
}

TEST(ArchSpec, MatrixKindMustBeKnown) {
  EXPECT_EQ(error_of(with("kind: cube", "kind: tensor")),
            "edge.yaml: matrix.kind = tensor: must be cube or systolic");
  EXPECT_EQ(error_of(with("dataflow: os", "dataflow: rs", with(kCube, kSystolic))),
            "edge.yaml: matrix.dataflow = rs: must be ws, os or is");
}

TEST(ArchSpec, MissingRequiredKeys) {
  EXPECT_EQ(error_of(with("  bandwidth_gbps: 34.1\n", "")),
            "edge.yaml: dram.bandwidth_gbps: missing (required)");
  EXPECT_EQ(error_of(with("cores: 1\n", "")), "edge.yaml: cores: missing (required)");
  EXPECT_EQ(error_of(with(" rsqrt: 4,", "")),
            "edge.yaml: vector.cycles.rsqrt: missing (required)");
  EXPECT_EQ(error_of(with("banks: 2, ", "")), "edge.yaml: buffers[1].banks: missing (required)");
  EXPECT_EQ(error_of(with("    fp16: {m0: 16, k0: 16, n0: 16}\n", "")),
            "edge.yaml: matrix.shapes.fp16: missing (required: fp16 is in matrix.dtypes)");
}

TEST(ArchSpec, UnknownKeysSuggestTheClosest) {
  EXPECT_EQ(error_of(with("bytes_per_cycle: 64\n", "bytes_per_cyle: 64\n")),
            "edge.yaml: vector.bytes_per_cyle: unknown key (did you mean bytes_per_cycle?)");
  EXPECT_EQ(error_of(with("clock_ghz", "clok_ghz")),
            "edge.yaml: clok_ghz: unknown key (did you mean clock_ghz?)");
  EXPECT_EQ(error_of(with("latency_ns: 100", "latency_ns: 100\n  colour: blue")),
            "edge.yaml: dram.colour: unknown key (known keys: bandwidth_gbps, latency_ns, bytes)");
  EXPECT_EQ(error_of(with("  kind: cube\n", "  kind: cube\n  rows: 16\n")),
            "edge.yaml: matrix.rows: only for kind systolic (this matrix is kind cube)");
  EXPECT_EQ(error_of(with("latency_ns: 100", "latency_ns: 100\n  latency_ns: 90")),
            "edge.yaml: dram.latency_ns: duplicate key");
}

TEST(ArchSpec, WrongTypes) {
  EXPECT_EQ(error_of(with("clock_ghz: 1.0", "clock_ghz: \"fast\"")),
            "edge.yaml: clock_ghz = \"fast\": must be a number");
  EXPECT_EQ(error_of(with("clock_ghz: 1.0", "clock_ghz: fast")),
            "edge.yaml: clock_ghz = \"fast\": must be a number");
  EXPECT_EQ(error_of(with("clock_ghz: 1.0", "clock_ghz: \"1.0\"")),
            "edge.yaml: clock_ghz = \"1.0\": must be a number");
  EXPECT_EQ(error_of(with("cores: 1", "cores: 1.5")), "edge.yaml: cores = 1.5: must be an integer");
  EXPECT_EQ(error_of(with("cores: 1", "cores: [1, 2]")),
            "edge.yaml: cores = [1, 2]: must be an integer");
  EXPECT_EQ(error_of(with("  latency_ns: 100", "  latency_ns:")),
            "edge.yaml: dram.latency_ns = null: must be a number");
  EXPECT_EQ(error_of(with("dram:\n  bandwidth_gbps: 34.1\n  latency_ns: 100\n", "dram: 34\n")),
            "edge.yaml: dram = 34: must be a mapping");
  EXPECT_EQ(error_of("- a\n- b\n"), "edge.yaml: (top level) = [a, b]: must be a mapping");
  EXPECT_EQ(error_of(""),
            "edge.yaml: (top level): empty document (expected a mapping with name, clock_ghz, "
            "cores, matrix, vector, buffers, dma, dram)");
}

TEST(ArchSpec, SizesAndRatesMustBePositive) {
  EXPECT_EQ(error_of(with("cores: 1", "cores: 0")), "edge.yaml: cores = 0: must be positive");
  EXPECT_EQ(error_of(with("bytes: 196608", "bytes: -4")),
            "edge.yaml: buffers[1].bytes = -4: must be positive");
  EXPECT_EQ(error_of(with("bytes_per_cycle: 32", "bytes_per_cycle: 0")),
            "edge.yaml: dma[1].bytes_per_cycle = 0: must be positive");
  EXPECT_EQ(error_of(with("setup_cycles: 0", "setup_cycles: -1")),
            "edge.yaml: dma[1].setup_cycles = -1: must not be negative");
  EXPECT_EQ(error_of(with("bandwidth_gbps: 34.1", "bandwidth_gbps: 0")),
            "edge.yaml: dram.bandwidth_gbps = 0: must be positive");
  EXPECT_EQ(error_of(with("int8: {m0: 16", "int8: {m0: 0")),
            "edge.yaml: matrix.shapes.int8.m0 = 0: must be positive");
  EXPECT_EQ(error_of(with("exp: 4", "exp: 0")), "edge.yaml: vector.cycles.exp = 0: must be positive");
}

TEST(ArchSpec, DuplicateNames) {
  EXPECT_EQ(error_of(with("name: L0C", "name: UB")),
            "edge.yaml: buffers[2].name = UB: duplicate buffer name (buffers[1] has it)");
  EXPECT_EQ(error_of(with("name: mte3", "name: mte2")),
            "edge.yaml: dma[1].name = mte2: duplicate dma name (dma[0] has it)");
}

// partial_writes: a boolean spelled true or false, only on an engine that writes DRAM.
TEST(ArchSpec, PartialWritesIsABooleanOfAnEngineThatStores) {
  EXPECT_FALSE(parse_arch_spec(kValid, "edge.yaml").dma[1].partial_writes);  // absent: false
  const std::string on = with("setup_cycles: 0, burst_bytes: 256, alignment: 32}",
                              "setup_cycles: 0, burst_bytes: 256, alignment: 32, partial_writes: true}");
  EXPECT_TRUE(parse_arch_spec(on, "edge.yaml").dma[1].partial_writes);
  EXPECT_EQ(error_of(with("partial_writes: true", "partial_writes: yes", on)),
            "edge.yaml: dma[1].partial_writes = yes: must be true or false");
  EXPECT_EQ(error_of(with("name: mte2,", "name: mte2, direction: in, partial_writes: true,")),
            "edge.yaml: dma[0].partial_writes = true: an engine with direction: in writes nothing to DRAM");
}

TEST(ArchSpec, ReadersMustBeUnits) {
  EXPECT_EQ(error_of(with("readers: [matrix, dma]", "readers: [matrix, cube]")),
            "edge.yaml: buffers[2].readers[1] = cube: must be matrix, vector or dma");
  EXPECT_EQ(error_of(with("readers: [dma]", "readers: []")),
            "edge.yaml: buffers[0].readers = []: must list at least one reader");
}

TEST(ArchSpec, DtypesAndCubeShapesAgree) {
  EXPECT_EQ(error_of(with("    fp16: {m0: 16, k0: 16, n0: 16}\n",
                          "    fp16: {m0: 16, k0: 16, n0: 16}\n    fp32: {m0: 16, k0: 8, n0: 16}\n")),
            "edge.yaml: matrix.shapes.fp32: dtype fp32 is not in matrix.dtypes [int8, fp16]; "
            "add it there or remove this shape");
  EXPECT_EQ(error_of(with("dtypes: [int8, fp16]", "dtypes: [int8, fp8]")),
            "edge.yaml: matrix.dtypes[1] = fp8: must be int8, fp16, bf16, fp32, int32 or int4");
  EXPECT_EQ(error_of(with("dtypes: [int8, fp16]", "dtypes: [int8, fp16, int8]")),
            "edge.yaml: matrix.dtypes[2] = int8: duplicate dtype");
}

// matrix.layout: optional, nd by default; nz only for a cube whose shapes are NZ fractals.
TEST(ArchSpec, OperandLayout) {
  EXPECT_EQ(parse_arch_spec(kValid, "edge.yaml").matrix.layout, OperandLayout::nd);
  EXPECT_EQ(parse_arch_spec(with("  kind: cube\n", "  kind: cube\n  layout: nz\n"), "edge.yaml").matrix.layout,
            OperandLayout::nz);
  EXPECT_EQ(error_of(with("  kind: cube\n", "  kind: cube\n  layout: zn\n")),
            "edge.yaml: matrix.layout = zn: must be nd or nz");
  EXPECT_EQ(error_of(with("  kind: cube\n", "  kind: cube\n  layout: nz\n",
                          with("fp16: {m0: 16, k0: 16, n0: 16}", "fp16: {m0: 8, k0: 16, n0: 16}"))),
            "edge.yaml: matrix.layout = nz: NZ fractals are 16 rows x 32 B, but matrix.shapes.fp16 is m0 = 8, "
            "k0 = 16 (32 B); use layout nd or m0 = 16, k0 = 16");
  EXPECT_EQ(error_of(with("dataflow: os", "dataflow: os\n  layout: nz", with(kCube, kSystolic))),
            "edge.yaml: matrix.layout: only for kind cube (this matrix is kind systolic)");
}

TEST(ArchSpec, MalformedYamlNamesLineAndColumn) {
  EXPECT_EQ(error_of("name: edge\nclock_ghz: 1.0\nmatrix: {kind: cube\ncores: 1\n"),
            "edge.yaml: malformed YAML at line 4, column 6: end of map flow not found");
  EXPECT_EQ(error_of("name: edge\n  clock_ghz: 1.0\n"),
            "edge.yaml: malformed YAML at line 2, column 12: illegal map value");
}

// Found by tests/fuzz/arch_spec_fuzz.cpp: a bad escape in a quoted scalar made yaml-cpp's
// message end in the raw character (a newline, here a \x01), and a newline inside a quoted value
// was echoed as it is; every message stays one line.
TEST(ArchSpec, ControlCharactersInMessagesKeepOneLine) {
  EXPECT_EQ(error_of("name: \"a\\\x01\"\n"),
            "edge.yaml: malformed YAML at line 1, column 11: unknown escape character: ?");
  EXPECT_EQ(error_of(with("clock_ghz: 1.0", "clock_ghz: \"fa\\nst\"")),
            "edge.yaml: clock_ghz = \"fa?st\": must be a number");
}

double peak(const std::string& name, Dtype d) { return preset(name).peak_ops_per_second(d); }

TEST(ArchPresets, AllLoadAndAreNamedAfterTheirFile) {
  const std::vector<std::string> expected = {"ascend-910b-like", "edge-6tops", "gemmini-default",
                                             "vta-default"};
  EXPECT_EQ(preset_names(), expected);
  for (const auto& name : preset_names()) {
    SCOPED_TRACE(name);
    const ArchSpec& s = preset(name);
    EXPECT_EQ(s.name, name);
    EXPECT_FALSE(s.source.empty());
    EXPECT_EQ(&preset(name), &s);  // cached
    EXPECT_NE(arch_summary(s).find(name), std::string::npos);
  }
}

// Each preset's derived peak (MACs/cycle × 2 × clock × cores) is the figure its source states.
TEST(ArchPresets, PeakMatchesTheSource) {
  EXPECT_NEAR(peak("edge-6tops", Dtype::int8), 6.144e12, 1e6);
  EXPECT_NEAR(peak("edge-6tops", Dtype::int8), 6e12, 0.05 * 6e12);  // "6 TOPS"
  EXPECT_NEAR(peak("edge-6tops", Dtype::fp16), 1.536e12, 1e6);
  EXPECT_NE(preset("edge-6tops").source.find("6.144 TOPS int8"), std::string::npos);

  EXPECT_NEAR(peak("ascend-910b-like", Dtype::fp16), 353.9e12, 0.1e12);
  EXPECT_NEAR(peak("ascend-910b-like", Dtype::int8), 707.8e12, 0.1e12);
  EXPECT_NE(preset("ascend-910b-like").source.find("353.9 TFLOPS fp16, 707.8 TOPS int8"),
            std::string::npos);
  EXPECT_NEAR(preset("ascend-910b-like").dram.bandwidth_gbps, 1600, 1e-9);

  EXPECT_NEAR(peak("gemmini-default", Dtype::int8), 512e9, 1e3);
  EXPECT_NE(preset("gemmini-default").source.find("512 GOPS int8"), std::string::npos);
  EXPECT_EQ(preset("gemmini-default").matrix.dataflow, Dataflow::ws);
  EXPECT_EQ(preset("gemmini-default").find_buffer("scratchpad")->bytes, 256 * 1024);
  EXPECT_EQ(preset("gemmini-default").find_buffer("accumulator")->bytes, 64 * 1024);

  EXPECT_NEAR(peak("vta-default", Dtype::int8), 51.2e9, 1e3);
  EXPECT_NE(preset("vta-default").source.find("51.2 GOPS int8"), std::string::npos);
  EXPECT_EQ(preset("vta-default").find_buffer("inp")->bytes, 32 * 1024);
  EXPECT_EQ(preset("vta-default").find_buffer("wgt")->bytes, 256 * 1024);
  EXPECT_EQ(preset("vta-default").find_buffer("acc")->bytes, 128 * 1024);
}

// dram.bytes (the decode planner's capacity) is optional, an integer like buffer sizes.
TEST(ArchSpec, DramBytesIsAnOptionalBoundedInteger) {
  EXPECT_EQ(parse_arch_spec(with("latency_ns: 100", "latency_ns: 100"), "edge.yaml").dram.bytes, 0);
  EXPECT_EQ(parse_arch_spec(with("latency_ns: 100", "latency_ns: 100\n  bytes: 8589934592"), "edge.yaml").dram.bytes,
            8589934592);
  EXPECT_EQ(error_of(with("latency_ns: 100", "latency_ns: 100\n  bytes: 2000000000000")),
            "edge.yaml: dram.bytes = 2000000000000: must be at most 2^40 in magnitude");
  EXPECT_EQ(error_of(with("latency_ns: 100", "latency_ns: 100\n  bytes: 0")), "edge.yaml: dram.bytes = 0: must be positive");
  EXPECT_EQ(error_of(with("latency_ns: 100", "latency_ns: 100\n  bytes: 8GB")), "edge.yaml: dram.bytes = \"8GB\": must be an integer");
}

// Every preset states its DRAM capacity; the host CPU preset is found by name but is no NPU preset.
TEST(ArchPresets, EveryPresetHasADramCapacityAndTheCpuIsAHostPreset) {
  for (const auto& name : preset_names()) EXPECT_GT(preset(name).dram.bytes, 0) << name;
  EXPECT_EQ(host_preset_names(), std::vector<std::string>{"cpu"});
  const ArchSpec& cpu = preset("cpu");
  EXPECT_EQ(cpu.name, "cpu");
  EXPECT_NEAR(cpu.dram.bandwidth_gbps, 14, 1e-9);
  EXPECT_NEAR(cpu.peak_ops_per_second(Dtype::int8), 1.024e12, 1e6);
  EXPECT_NE(cpu.source.find("1.024 TOPS int8, 256 GFLOPS fp16"), std::string::npos);
  EXPECT_EQ(preset("vta-default").dram.bytes, 512ll << 20);
}

// The A100-like reference preset (presets/gpu/, loaded by path, no NPU preset): its derived
// peaks are the datasheet's 312 TFLOPS fp16 and 624 TOPS int8 dense, its DMA engines
// carry at least the HBM's 2039 GB/s over the 108 SMs.
TEST(ArchPresets, A100LikeMatchesTheDatasheet) {
  const ArchSpec s = load_arch_spec(std::string(NPUKIT_ARCH_PRESET_DIR) + "/gpu/a100-like.yaml");
  EXPECT_EQ(s.name, "a100-like");
  EXPECT_EQ(s.cores, 108);
  EXPECT_NEAR(s.peak_ops_per_second(Dtype::fp16), 312e12, 0.005 * 312e12);
  EXPECT_NEAR(s.peak_ops_per_second(Dtype::int8), 624e12, 0.005 * 624e12);
  EXPECT_NE(s.source.find("311.9 TFLOPS fp16, 623.8 TOPS int8"), std::string::npos);
  EXPECT_NEAR(s.dram.bandwidth_gbps, 2039, 1e-9);
  EXPECT_EQ(s.dram.bytes, 80ll << 30);
  EXPECT_GE(s.dma_for(DmaDirection::in).bytes_per_cycle * s.clock_ghz * s.cores, s.dram.bandwidth_gbps);
  const std::vector<std::string> npus = preset_names();
  EXPECT_EQ(std::find(npus.begin(), npus.end(), "a100-like"), npus.end());
}

TEST(ArchPresets, AscendFacts) {
  const ArchSpec& s = preset("ascend-910b-like");
  EXPECT_EQ(s.find_buffer("UB")->bytes, 192 * 1024);
  EXPECT_EQ(s.find_buffer("UB")->alignment, 32);
  EXPECT_EQ(s.find_buffer("L1")->bytes, 512 * 1024);
  EXPECT_EQ(s.find_buffer("L0A")->bytes, 64 * 1024);
  EXPECT_EQ(s.find_buffer("L0B")->bytes, 64 * 1024);
  EXPECT_EQ(s.find_buffer("L0C")->bytes, 128 * 1024);
  EXPECT_EQ(s.matrix.shapes.at(Dtype::fp16).macs(), 16 * 16 * 16);
  EXPECT_EQ(s.matrix.shapes.at(Dtype::int8).k0, 32);
}

TEST(ArchPresets, SummaryStatesThePeak) {
  std::string summary = arch_summary(preset("edge-6tops"));
  EXPECT_NE(summary.find("3 cores at 1 GHz"), std::string::npos) << summary;
  EXPECT_NE(summary.find("int8 8x32x4 1024 MAC/cycle/core = 6.14 TOPS"), std::string::npos)
      << summary;
  EXPECT_NE(summary.find("34.1 GB/s"), std::string::npos) << summary;
}

TEST(ResolveArch, ByNameByPathAndUnknown) {
  EXPECT_EQ(resolve_arch("vta-default").name, "vta-default");

  const std::string preset_path = std::string(NPUKIT_ARCH_PRESET_DIR) + "/gemmini-default.yaml";
  ArchSpec by_path = resolve_arch(preset_path);
  EXPECT_EQ(by_path.name, "gemmini-default");
  EXPECT_EQ(by_path.origin, preset_path);

  const std::string mine = (std::filesystem::temp_directory_path() / "npukit_arch_test.yaml").string();
  { std::ofstream(mine) << with("name: edge", "name: mine"); }
  EXPECT_EQ(resolve_arch(mine).name, "mine");
  { std::ofstream(mine) << with("alignment: 512", "alignment: 24"); }
  EXPECT_EQ(resolve_error(mine), mine + ": buffers[2].alignment = 24: must be a power of two");
  std::remove(mine.c_str());

  EXPECT_EQ(resolve_error("edge-6top"),
            "arch 'edge-6top': unknown preset (did you mean edge-6tops?); presets: "
            "ascend-910b-like, edge-6tops, gemmini-default, vta-default; host presets: cpu; or "
            "give a path to a .yaml file");
  EXPECT_EQ(resolve_error("tpu"),
            "arch 'tpu': unknown preset (did you mean cpu?); presets: ascend-910b-like, edge-6tops, "
            "gemmini-default, vta-default; host presets: cpu; or give a path to a .yaml file");
  EXPECT_EQ(resolve_error("/nonexistent/arch.yaml"),
            "/nonexistent/arch.yaml: cannot open (No such file or directory)");
}

// The 1 MiB bound on a spec is the default of NPUKIT_MAX_SPEC_BYTES: lower it and a preset
// is refused, by its size and through a pipe alike; a malformed value is refused by name.
TEST(ResolveArch, SpecSizeLimitComesFromTheEnvironment) {
  const std::string preset_path = std::string(NPUKIT_ARCH_PRESET_DIR) + "/edge-6tops.yaml";
  const auto size = std::filesystem::file_size(preset_path);
  setenv("NPUKIT_MAX_SPEC_BYTES", std::to_string(size - 1).c_str(), 1);
  EXPECT_EQ(resolve_error(preset_path), preset_path + ": " + std::to_string(size) + " bytes; an architecture spec may have up to " +
                                            std::to_string(size - 1) + " B (NPUKIT_MAX_SPEC_BYTES)");
  // A device has no size to check first: the bound stops the read.
  setenv("NPUKIT_MAX_SPEC_BYTES", "4096", 1);
  EXPECT_EQ(resolve_error("/dev/zero"), "/dev/zero: longer than the limit; an architecture spec may have up to 4 KiB "
                                        "(NPUKIT_MAX_SPEC_BYTES)");
  setenv("NPUKIT_MAX_SPEC_BYTES", std::to_string(size).c_str(), 1);
  EXPECT_EQ(load_arch_spec(preset_path).name, "edge-6tops");  // at the limit: read
  setenv("NPUKIT_MAX_SPEC_BYTES", "1M", 1);
  EXPECT_EQ(resolve_error(preset_path), "NPUKIT_MAX_SPEC_BYTES: '1M' is not a positive number of bytes");
  unsetenv("NPUKIT_MAX_SPEC_BYTES");
  EXPECT_EQ(load_arch_spec(preset_path).name, "edge-6tops");
}

}  // namespace

namespace {

// The optional keys: buffer roles for the NPU schedules, DMA directions, sync cost.
TEST(ArchSpec, OptionalRolesDirectionsAndSync) {
  ArchSpec plain = parse_arch_spec(kValid, "edge.yaml");
  EXPECT_EQ(plain.roles.matrix_acc, "L0C");  // the last buffer the matrix unit reads
  EXPECT_EQ(plain.roles.vector, "UB");
  EXPECT_FALSE(plain.sync_cycles_given);
  EXPECT_FALSE(plain.dma[0].direction_given);

  const std::string more = kValid + "sync_cycles: 40\nroles: {matrix_a: L1, vector: UB}\n";
  ArchSpec s = parse_arch_spec(
      with("{name: mte2,", "{name: mte2, direction: in,", with("{name: mte3,", "{name: mte3, direction: out,", more)),
      "edge.yaml");
  EXPECT_EQ(s.sync_cycles, 40);
  EXPECT_TRUE(s.sync_cycles_given);
  EXPECT_EQ(s.roles.matrix_a, "L1");
  EXPECT_EQ(s.dma[1].direction, DmaDirection::out);

  EXPECT_EQ(error_of(kValid + "roles: {matrix_b: L9}\n"),
            "edge.yaml: roles.matrix_b = L9: names no buffer (buffers: L1, UB, L0C)");
  EXPECT_EQ(error_of(with("{name: mte2,", "{name: mte2, direction: up,")),
            "edge.yaml: dma[0].direction = up: must be both, in or out");
  EXPECT_EQ(error_of(kValid + "sync_cycles: -1\n"), "edge.yaml: sync_cycles = -1: must not be negative");
  EXPECT_EQ(error_of(with("{name: mte3,", "{name: mte3, direction: in,")),
            "edge.yaml: dma: no engine carries stores (give one direction: out or both)");
  EXPECT_EQ(error_of(with("clock_ghz: 1.0", "clock_ghz: 1e300")), "edge.yaml: clock_ghz = 1e300: must be <= 100 (GHz)");
}

}  // namespace
