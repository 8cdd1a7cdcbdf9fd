#include "simulator/cost/cost_model.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "simulator/arch/dtype_bytes.h"
#include "simulator/cost/compute_cycles.h"
#include "simulator/cost/transfer_model.h"

namespace npukit::sim {
namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
// Cycle counts are computed in doubles (shares of a core, bytes over rates) and rounded
// up once; the epsilon keeps an exact integer from rounding up through float noise.
double ceil_cycles(double c) { return std::max(0.0, std::ceil(c - 1e-9)); }
// Cycles as an integer. Numbers beyond 2^62 (or not finite) come only from arch values far
// outside any real machine (a clock of 1e308 GHz, a bandwidth of 1e-300 GB/s): an error,
// not a wrapped count.
int64_t cycles_of(double c) {
  const double v = ceil_cycles(c);
  if (!std::isfinite(v) || v > 4.6e18 || v < -4.6e18)
    throw std::invalid_argument("cycle count " + std::to_string(c) +
                                " is out of range: the arch spec's clock, bandwidths, latencies or setup cycles are "
                                "outside any real machine's");
  return static_cast<int64_t>(v);
}

void require(bool ok, const std::string& what) {
  if (!ok) throw std::invalid_argument(what);
}

// Setup and streaming cycles of a group of transfers, and the DRAM bytes they move.
struct DmaLoad {
  double setup = 0, stream = 0, bytes = 0;
  bool any = false;
  double cycles() const { return setup + stream; }
  void add(const DmaLoad& o) { setup += o.setup, stream += o.stream, bytes += o.bytes, any = any || o.any; }
  DmaLoad scaled(double f) const { return {setup * f, stream * f, bytes * f, any}; }
};

// Adds the cycles of the critical path to its categories in doubles, then rounds once.
struct PathSplit {
  double compute = 0, bandwidth = 0, latency = 0, sync = 0;
  void dma(const DmaLoad& d, double times = 1) { latency += d.setup * times, bandwidth += d.stream * times; }
};

Dtype dominant_matrix_dtype(const OpAnalysis& a) {
  Dtype best = a.dtype;
  int64_t most = -1;
  for (const MatrixWork& w : a.matrix) {
    const int64_t macs = w.useful_macs > 0 ? w.useful_macs : w.count * w.m * w.n * w.k;
    if (macs > most) most = macs, best = w.dtype;
  }
  return best;
}

double vector_peak(const ArchSpec& arch, Dtype d) {
  auto it = arch.vector.cycles.find(VectorOp::add);
  const double per_vector = it == arch.vector.cycles.end() ? 1.0 : it->second;
  return arch.vector.bytes_per_cycle / static_cast<double>(dtype_bytes(d)) / per_vector * arch.clock_ghz * 1e9 *
         static_cast<double>(arch.cores);
}

Roofline roofline_of(const OpAnalysis& a, const ArchSpec& arch, double time_us) {
  Roofline r;
  double vector_ops = 0;
  for (const VectorWork& v : a.vector)
    for (const auto& [op, n] : v.ops) vector_ops += static_cast<double>(n) * (op == VectorOp::fma ? 2 : 1);
  r.ops = 2.0 * static_cast<double>(a.macs()) + vector_ops;
  const int64_t bytes = a.dram_bytes();
  r.arithmetic_intensity = bytes > 0 ? r.ops / static_cast<double>(bytes) : 0;
  r.bandwidth_bytes_per_second = arch.dram.bandwidth_gbps * 1e9;
  for (Dtype d : arch.matrix.dtypes) r.roofs.push_back({std::string(to_string(d)) + " matrix", arch.peak_ops_per_second(d)});
  std::vector<Dtype> vector_dtypes;
  for (const VectorWork& v : a.vector)
    if (std::find(vector_dtypes.begin(), vector_dtypes.end(), v.dtype) == vector_dtypes.end()) vector_dtypes.push_back(v.dtype);
  for (Dtype d : vector_dtypes) r.roofs.push_back({std::string(to_string(d)) + " vector", vector_peak(arch, d)});
  if (!a.matrix.empty()) {
    const Dtype d = dominant_matrix_dtype(a);
    r.peak_ops_per_second = arch.matrix.supports(d) ? arch.peak_ops_per_second(d) : 0;
  } else {
    // Vector work of several dtypes runs at several rates: the fastest is the roof (an
    // upper bound the achieved rate cannot pass).
    for (Dtype d : vector_dtypes) r.peak_ops_per_second = std::max(r.peak_ops_per_second, vector_peak(arch, d));
  }
  r.attainable_ops_per_second = r.arithmetic_intensity > 0
                                    ? std::min(r.peak_ops_per_second, r.arithmetic_intensity * r.bandwidth_bytes_per_second)
                                    : r.peak_ops_per_second;
  r.achieved_ops_per_second = time_us > 0 ? r.ops / (time_us * 1e-6) : 0;
  return r;
}

void validate(const OpAnalysis& a) {
  require(a.tiles >= 1, "op " + a.op + ": tiles = " + std::to_string(a.tiles) + ": must be >= 1");
  require(a.parallel_extent >= 0,
          "op " + a.op + ": parallel_extent = " + std::to_string(a.parallel_extent) + ": must be >= 0");
  for (const Transfer& t : a.transfers)
    require(t.count >= 0 && t.rows >= 0 && t.row_bytes >= 0,
            "op " + a.op + ": transfer " + t.tensor + " <-> " + t.func + ": count = " + std::to_string(t.count) +
                ", rows = " + std::to_string(t.rows) + ", row_bytes = " + std::to_string(t.row_bytes) +
                ": must not be negative");
  for (const MatrixWork& w : a.matrix)
    require(w.count >= 0 && w.m > 0 && w.n > 0 && w.k > 0,
            "op " + a.op + ": matrix work " + w.func + ": count = " + std::to_string(w.count) + ", m×n×k = " +
                std::to_string(w.m) + "×" + std::to_string(w.n) + "×" + std::to_string(w.k) +
                ": count must be >= 0 and tile extents > 0");
}

}  // namespace

const char* to_string(Pipe p) {
  switch (p) {
    case Pipe::matrix: return "matrix";
    case Pipe::vector: return "vector";
    case Pipe::dma_in: return "dma_in";
    case Pipe::dma_out: return "dma_out";
    case Pipe::sync: return "sync";
  }
  return "?";
}

const char* to_string(Bound b) {
  switch (b) {
    case Bound::compute: return "compute";
    case Bound::bandwidth: return "bandwidth";
    case Bound::latency: return "latency";
    case Bound::sync: return "sync";
  }
  return "?";
}

int64_t matrix_cycles(const MatrixWork& w, const ArchSpec& arch) {
  const MatrixUnit& mu = arch.matrix;
  if (w.count == 0) return 0;
  if (mu.kind == MatrixKind::systolic) return w.count * systolic_gemm_cycles(mu.dataflow, mu.rows, mu.cols, w.m, w.n, w.k);
  const Dtype d = mu.supports(w.dtype) || mu.dtypes.empty() ? w.dtype : mu.dtypes.front();
  auto it = mu.shapes.find(d);
  require(it != mu.shapes.end(), "arch " + arch.name + ": no cube shape for " + to_string(d));
  return w.count * cube_gemm_cycles(it->second, w.m, w.n, w.k);
}

int64_t vector_cycles(const VectorWork& v, const ArchSpec& arch) {
  // Each class streams its operands through the unit once: bytes / bytes_per_cycle
  // vectors, each costing the class's cycles per vector. Classes do not overlap.
  require(arch.vector.bytes_per_cycle > 0, "arch " + arch.name + ": vector.bytes_per_cycle must be > 0");
  double total = 0;
  for (const auto& [op, n] : v.ops) {
    require(n >= 0, "vector work " + v.func + ": " + to_string(op) + " ops = " + std::to_string(n) + ": must be >= 0");
    const double vectors = std::ceil(static_cast<double>(n * dtype_bytes(v.dtype)) / arch.vector.bytes_per_cycle - 1e-9);
    auto c = arch.vector.cycles.find(op);
    total += std::ceil(vectors * (c == arch.vector.cycles.end() ? 1.0 : c->second) - 1e-9);
  }
  return static_cast<int64_t>(total);
}

CostReport estimate_cost(const OpAnalysis& a, const ArchSpec& arch, const CostOptions& opt) {
  validate(a);
  require(arch.clock_ghz > 0, "arch " + arch.name + ": clock_ghz must be > 0");
  CostReport r;

  // The parallel loop's iterations are dealt to min(cores, extent) cores; the busiest
  // core gets ⌈extent / cores⌉ of them and sets the time. Every per-op total below is
  // scaled by that core's share.
  const int64_t pe = std::max<int64_t>(1, a.parallel_extent);
  r.cores_used = std::min<int64_t>(arch.cores, pe);
  const int64_t per_core = ceil_div(pe, r.cores_used);
  const double share = static_cast<double>(per_core) / static_cast<double>(pe);
  const int64_t n = std::max<int64_t>(1, ceil_div(a.tiles * per_core, pe));
  r.iterations = n;

  // The DRAM is shared: with every active core streaming, one core gets 1/cores_used of it.
  const double dram_per_core = arch.dram.bandwidth_gbps / arch.clock_ghz / static_cast<double>(r.cores_used);
  const double latency = std::ceil(arch.dram.latency_ns * arch.clock_ghz - 1e-9);
  r.dram_latency_cycles = static_cast<int64_t>(latency);

  DmaLoad once_in, once_out, in_db, in_serial, out_db, out_serial;
  for (const Transfer& t : a.transfers) {
    if (t.count == 0 || t.bytes() == 0) continue;
    const DmaEngine& e = dma_engine_for(arch, t.direction);
    const double rate = std::min(e.bytes_per_cycle, dram_per_core);
    const double moved = static_cast<double>(burst_bytes_moved(t, e));
    // A transfer issued outside every loop (a weight loaded once) is needed by every core in
    // full; the others are split with the tiles.
    const double count = static_cast<double>(t.count) * (t.loop.empty() ? 1.0 : share);
    const DmaLoad load{count * static_cast<double>(e.setup_cycles), count * moved / rate, count * moved, true};
    const bool in = t.direction == Direction::in;
    if (t.loop.empty()) (in ? once_in : once_out).add(load);
    else if (t.double_buffered) (in ? in_db : out_db).add(load);
    else (in ? in_serial : out_serial).add(load);
  }
  r.double_buffered = in_db.any || out_db.any;
  DmaLoad all_in = once_in, all_out = once_out;
  all_in.add(in_db), all_in.add(in_serial), all_out.add(out_db), all_out.add(out_serial);

  int64_t matrix_total = 0, vector_total = 0;
  for (const MatrixWork& w : a.matrix) {
    matrix_total += matrix_cycles(w, arch);
    if (!arch.matrix.supports(w.dtype) && !arch.matrix.dtypes.empty())
      r.notes.push_back("matrix work " + w.func + " is " + to_string(w.dtype) + ", which " + arch.name +
                        "'s matrix unit lacks; costed as " + to_string(arch.matrix.dtypes.front()));
  }
  for (const VectorWork& v : a.vector) vector_total += vector_cycles(v, arch);
  const double matrix_core = ceil_cycles(static_cast<double>(matrix_total) * share);
  const double vector_core = ceil_cycles(static_cast<double>(vector_total) * share);

  // One tile iteration of the busiest core. The compute chain is serial: loads that are
  // not double-buffered (each a new dependent DRAM round trip), matrix, then vector (it
  // post-processes the matrix unit's tile), then stores that are not double-buffered.
  // Double-buffered loads of tile i+1 and stores of tile i-1 run beside it, each engine
  // carrying all its transfers in turn, and the DRAM caps the bytes both move together.
  const double inv_n = 1.0 / static_cast<double>(n);
  const DmaLoad in_db_i = in_db.scaled(inv_n), in_serial_i = in_serial.scaled(inv_n);
  const DmaLoad out_db_i = out_db.scaled(inv_n), out_serial_i = out_serial.scaled(inv_n);
  const double matrix_i = matrix_core * inv_n, vector_i = vector_core * inv_n;
  const double latency_serial_i = in_serial.any ? latency : 0;
  const double chain_i = latency_serial_i + in_serial_i.cycles() + matrix_i + vector_i + out_serial_i.cycles();
  const double in_engine_i = latency_serial_i + in_serial_i.cycles() + in_db_i.cycles();
  const double out_engine_i = out_serial_i.cycles() + out_db_i.cycles();
  const double dram_i = (in_db_i.bytes + in_serial_i.bytes + out_db_i.bytes + out_serial_i.bytes) / dram_per_core;
  // Sync: each iteration hands a tile from the load DMA to the compute units and from
  // them to the store DMA; each handoff is a flag the waiting pipe polls, serial with it.
  const bool has_in_i = in_db.any || in_serial.any, has_out_i = out_db.any || out_serial.any;
  const int64_t sync_cycles = arch.sync_cycles_given ? arch.sync_cycles : opt.sync_cycles_per_handoff;
  const double sync_i = static_cast<double>(sync_cycles) * ((has_in_i ? 1 : 0) + (has_out_i ? 1 : 0));
  const double stage_i = std::max({chain_i, in_engine_i, out_engine_i, dram_i});
  const double iter_i = stage_i + sync_i;

  // Prologue: the first DRAM round trip, the loads done once and the first tile's
  // double-buffered loads. Epilogue: the last tile's double-buffered stores and the
  // stores done once. Without double buffering both are only the once-transfers.
  const bool prologue_loads = once_in.any || in_db.any;
  const double prologue = (prologue_loads ? latency : 0) + once_in.cycles() + in_db_i.cycles();
  const double epilogue = out_db_i.cycles() + once_out.cycles();
  const double total = prologue + static_cast<double>(n) * iter_i + epilogue;
  r.total_cycles = std::max<int64_t>(0, cycles_of(total));
  r.prologue_cycles = cycles_of(prologue);
  r.iteration_cycles = cycles_of(iter_i);
  r.epilogue_cycles = cycles_of(epilogue);
  r.time_us = static_cast<double>(r.total_cycles) / (arch.clock_ghz * 1e3);

  // The bound: split every critical-path cycle into what it waits for, and take the
  // largest share. In an iteration only the longest stage is on the path.
  PathSplit p;
  p.latency += prologue_loads ? latency : 0;
  p.dma(once_in), p.dma(in_db_i), p.dma(out_db_i), p.dma(once_out);
  const double nd = static_cast<double>(n);
  p.sync += nd * sync_i;
  if (stage_i > 0) {
    if (chain_i >= stage_i) {
      p.compute += nd * (matrix_i + vector_i);
      p.latency += nd * latency_serial_i;
      p.dma(in_serial_i, nd), p.dma(out_serial_i, nd);
    } else if (dram_i >= stage_i) {
      p.bandwidth += nd * dram_i;
    } else if (in_engine_i >= stage_i) {
      p.latency += nd * latency_serial_i;
      p.dma(in_serial_i, nd), p.dma(in_db_i, nd);
    } else {
      p.dma(out_serial_i, nd), p.dma(out_db_i, nd);
    }
  }
  const std::array<std::pair<Bound, double>, 4> split{
      {{Bound::compute, p.compute}, {Bound::bandwidth, p.bandwidth}, {Bound::latency, p.latency}, {Bound::sync, p.sync}}};
  r.bound = std::max_element(split.begin(), split.end(), [](auto& x, auto& y) { return x.second < y.second; })->first;
  r.critical_path = {std::llround(p.compute), std::llround(p.bandwidth), std::llround(p.latency), std::llround(p.sync)};
  // Rounding each share may miss the total by a cycle or two; the bound's share absorbs it.
  const int64_t rounded = r.critical_path.compute + r.critical_path.bandwidth + r.critical_path.latency + r.critical_path.sync;
  int64_t* bound_share[] = {&r.critical_path.compute, &r.critical_path.bandwidth, &r.critical_path.latency,
                            &r.critical_path.sync};
  *bound_share[static_cast<int>(r.bound)] += r.total_cycles - rounded;

  auto set_busy = [&](Pipe pipe, double c) {
    r.busy_cycles[static_cast<size_t>(pipe)] = cycles_of(c);
    r.utilization[static_cast<size_t>(pipe)] = r.total_cycles > 0 ? std::min(1.0, c / static_cast<double>(r.total_cycles)) : 0;
  };
  set_busy(Pipe::matrix, matrix_core);
  set_busy(Pipe::vector, vector_core);
  set_busy(Pipe::dma_in, all_in.cycles());
  set_busy(Pipe::dma_out, all_out.cycles());
  set_busy(Pipe::sync, nd * sync_i);

  r.dram_bytes = a.dram_bytes();
  r.macs = a.macs();
  r.roofline = roofline_of(a, arch, r.time_us);
  if (!a.transfers.empty())
    r.notes.push_back("loads on DMA engine " + dma_engine_for(arch, Direction::in).name + ", stores on " +
                      dma_engine_for(arch, Direction::out).name +
                      (arch.dma.front().direction_given ? " (by their direction)" : " (the spec's first and second engines)"));
  if ((has_in_i || has_out_i) && !arch.sync_cycles_given)
    r.notes.push_back("sync: " + std::to_string(sync_cycles) +
                      " cycles per DMA <-> compute handoff (assumed; the arch spec sets none: key sync_cycles)");

  // The timeline: per-unit intervals of the busiest core, laid out as the formulas above
  // (prologue, n equal iteration slots, epilogue). Only the first and last few iterations
  // are drawn; the middle is one summary interval per busy unit, as long as its busy time.
  auto add = [&](Pipe pipe, std::string name, double start, double len) {
    if (len <= 0) return;
    r.timeline.push_back({pipe, std::move(name), std::llround(start), std::llround(start + len)});
  };
  {
    double t = 0;
    if (prologue_loads && latency > 0) add(Pipe::dma_in, "DRAM latency", t, latency), t += latency;
    add(Pipe::dma_in, "load once", t, once_in.cycles()), t += once_in.cycles();
    add(Pipe::dma_in, "load tile 0", t, in_db_i.cycles());
  }
  const int64_t edge = std::max<int64_t>(1, opt.timeline_edge_iterations);
  auto slot = [&](int64_t i) { return prologue + static_cast<double>(i) * iter_i; };
  auto draw_iteration = [&](int64_t i) {
    const double s = slot(i);
    const std::string tile = " tile " + std::to_string(i);
    double c = s;
    if (latency_serial_i > 0) add(Pipe::dma_in, "DRAM latency" + tile, c, latency_serial_i), c += latency_serial_i;
    add(Pipe::dma_in, "load" + tile, c, in_serial_i.cycles()), c += in_serial_i.cycles();
    if (i + 1 < n) add(Pipe::dma_in, "load tile " + std::to_string(i + 1), c, in_db_i.cycles());
    add(Pipe::matrix, "matmul" + tile, c, matrix_i), c += matrix_i;
    add(Pipe::vector, "vector" + tile, c, vector_i), c += vector_i;
    if (i >= 1) add(Pipe::dma_out, "store tile " + std::to_string(i - 1), s, out_db_i.cycles());
    add(Pipe::dma_out, "store" + tile, std::max(c, s + (i >= 1 ? out_db_i.cycles() : 0)), out_serial_i.cycles());
    add(Pipe::sync, "handoffs" + tile, s + stage_i, sync_i);
  };
  if (n <= 2 * edge + 1) {
    for (int64_t i = 0; i < n; ++i) draw_iteration(i);
  } else {
    for (int64_t i = 0; i < edge; ++i) draw_iteration(i);
    const double s = slot(edge), e = slot(n - edge);
    const std::string what = "tiles " + std::to_string(edge) + ".." + std::to_string(n - edge - 1) + " (" +
                             std::to_string(n - 2 * edge) + " iterations, summarized)";
    // Each unit's summary interval lasts as long as the unit is busy over those
    // iterations (starting with them), so the track's filled share is its utilization.
    const double busy_i[] = {matrix_i, vector_i, in_engine_i, out_engine_i, sync_i};
    const double middle = static_cast<double>(n - 2 * edge);
    for (Pipe pipe : kPipes) {
      const double busy = busy_i[static_cast<size_t>(pipe)] * middle;
      if (busy > 0) add(pipe, what + ", busy " + std::to_string(std::llround(busy)) + " cycles", s, std::min(busy, e - s));
    }
    for (int64_t i = n - edge; i < n; ++i) draw_iteration(i);
  }
  {
    const double t = slot(n);
    add(Pipe::dma_out, "store tile " + std::to_string(n - 1), t, out_db_i.cycles());
    add(Pipe::dma_out, "store once", t + out_db_i.cycles(), once_out.cycles());
  }
  return r;
}

}  // namespace npukit::sim
