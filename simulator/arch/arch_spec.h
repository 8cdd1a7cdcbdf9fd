// The NPU architecture spec: what one accelerator offers the simulator (matrix unit,
// vector unit, on-chip buffers, DMA engines, DRAM, clock, cores), loaded from a YAML file
// and validated on load. The schema is documented in docs/simulator/arch-spec.md; presets
// ship in simulator/arch/presets/.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace npukit::sim {

// int4: a matrix unit's int4-weight mode (4-bit weights against int8 activations, int32
// accumulation); no preset lists it (docs/simulator/arch-spec.md).
enum class Dtype { int8, fp16, bf16, fp32, int32, int4 };
enum class MatrixKind { cube, systolic };
enum class Dataflow { ws, os, is };  // weight-, output-, input-stationary
enum class Unit { matrix, vector, dma };
enum class VectorOp { add, mul, fma, exp, rsqrt, div, convert };
// How a cube unit wants its operands staged on chip: row-major tiles (nd) or NZ fractals
// of 16 rows x 32 bytes (layouts/nz.h), as Ascend's cube reads them.
enum class OperandLayout { nd, nz };

const char* to_string(Dtype d);
const char* to_string(MatrixKind k);
const char* to_string(Dataflow d);
const char* to_string(Unit u);
const char* to_string(VectorOp op);
const char* to_string(OperandLayout l);

// One cube step: an m0×k0 tile times a k0×n0 tile, m0·k0·n0 MACs per cycle.
struct CubeShape {
  int64_t m0 = 0, k0 = 0, n0 = 0;
  int64_t macs() const { return m0 * k0 * n0; }
};

struct MatrixUnit {
  MatrixKind kind = MatrixKind::cube;
  std::vector<Dtype> dtypes;              // supported operand dtypes
  std::map<Dtype, CubeShape> shapes;      // cube: one shape per dtype in `dtypes`
  int64_t rows = 0, cols = 0;             // systolic: R×C processing elements
  Dataflow dataflow = Dataflow::ws;       // systolic only
  OperandLayout layout = OperandLayout::nd;  // cube only (optional `layout:` in the file)

  bool supports(Dtype d) const;
  // Peak MACs per cycle of one core for `d`; 0 when `d` is not supported.
  int64_t macs_per_cycle(Dtype d) const;
};

struct VectorUnit {
  double bytes_per_cycle = 0;
  std::map<VectorOp, double> cycles;  // cycles per op class; every class is present
};

struct Buffer {
  std::string name;
  int64_t bytes = 0;
  int64_t alignment = 1;  // bytes, a power of two
  int64_t banks = 1;
  std::vector<Unit> readers;
  bool read_by(Unit u) const;
};

// Which transfers an engine carries: DRAM -> buffers (in), buffers -> DRAM (out) or both.
enum class DmaDirection { both, in, out };
const char* to_string(DmaDirection d);

struct DmaEngine {
  std::string name;
  DmaDirection direction = DmaDirection::both;
  bool direction_given = false;  // the file said; otherwise the first engine loads, the second stores
  double bytes_per_cycle = 0;
  int64_t setup_cycles = 0;
  int64_t burst_bytes = 0;
  int64_t alignment = 1;  // bytes, a power of two
  // Stores with byte enables (AXI WSTRB, TileLink PutPartial, Ascend's DataCopyPad): a
  // store run that starts or ends off `alignment` is written as the aligned units it
  // touches, the bytes outside it masked, instead of being an error. Optional in the file
  // (`partial_writes`, default false); loads never need it.
  bool partial_writes = false;
};

// Off-chip memory of the whole chip, shared by all cores.
struct Dram {
  double bandwidth_gbps = 0;  // GB/s (1e9 bytes per second)
  double latency_ns = 0;
  int64_t bytes = 0;  // capacity; 0 when the file gives no `bytes` (optional key)
};

// Which buffer holds what in the shipped NPU schedules: the matrix unit's two operands and
// its accumulator, and the vector unit's working buffer. Optional in the file (`roles:`);
// missing entries default to the first buffer the unit reads (the last one for `acc`).
struct BufferRoles {
  std::string matrix_a, matrix_b, matrix_acc, vector;
};

struct ArchSpec {
  std::string name;
  std::string source;  // where the numbers come from (optional in the file)
  std::string origin;  // the file (or label) it was loaded from
  double clock_ghz = 0;
  int64_t cores = 1;
  MatrixUnit matrix;
  VectorUnit vector;
  std::vector<Buffer> buffers;
  std::vector<DmaEngine> dma;
  Dram dram;
  BufferRoles roles;
  // Cycles one handoff between a DMA engine and the compute units costs (a flag set by one
  // and polled by the other). Optional in the file (`sync_cycles`); 16 is our assumption.
  int64_t sync_cycles = 16;
  bool sync_cycles_given = false;

  const Buffer* find_buffer(const std::string& name) const;
  const DmaEngine* find_dma(const std::string& name) const;
  // The engine that carries loads (`in`) or stores (`out`): the first that says it carries
  // that direction; when none says, the first engine loads and the second (if any) stores.
  // std::invalid_argument when no engine carries it.
  const DmaEngine& dma_for(DmaDirection direction) const;
  // Whole-chip peak: MACs/cycle × 2 ops × clock × cores, in ops per second.
  double peak_ops_per_second(Dtype d) const;
  // DRAM bytes one core may move per cycle when all cores stream at once.
  double dram_bytes_per_cycle_per_core() const;
};

// Parses and validates. Every error is a std::runtime_error with one line:
// "<origin>: <key path> = <value>: <rule>", e.g.
// "edge.yaml: buffers[2].alignment = 24: must be a power of two".
ArchSpec parse_arch_spec(const std::string& yaml_text, const std::string& origin);
ArchSpec load_arch_spec(const std::string& path);

// A few lines for reports: name, clock, cores, peak per dtype, buffers, DMA, DRAM.
std::string arch_summary(const ArchSpec& spec);

// Presets are the *.yaml files of the installed preset folder beside the running program
// (bin/../share/npukit/presets), else of NPUKIT_ARCH_PRESET_DIR (the source tree's),
// named by their file stem.
std::vector<std::string> preset_names();
// Host presets (presets/host/*.yaml: the CPU the decode planner falls back to). `preset`
// and `resolve_arch` find them by name too, but they are no NPU: preset_names() leaves
// them out, so the npu-sim targets and the tests that sweep every NPU preset skip them.
std::vector<std::string> host_preset_names();
const ArchSpec& preset(const std::string& name);  // loaded once, then cached
// A path (contains '/' or ends in .yaml/.yml) is loaded; anything else is a preset name.
// An unknown name throws with the list of presets.
ArchSpec resolve_arch(const std::string& name_or_path);

}  // namespace npukit::sim
