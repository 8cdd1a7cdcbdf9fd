#include "simulator/rules/rules.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "runtime/message.h"
#include "simulator/arch/dtype_bytes.h"
#include "simulator/cost/transfer_model.h"
#include "simulator/rules/footprint.h"

namespace npukit::sim {
namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t round_up(int64_t a, int64_t b) { return ceil_div(a, b) * b; }

// "25%", "87.5%": one decimal only when it says something.
std::string percent(double share) {
  const double p = share * 100.0;
  return std::fabs(p - std::round(p)) < 0.05 ? fmt::format("{:.0f}%", p) : fmt::format("{:.1f}%", p);
}

std::string join(const std::vector<std::string>& items, const char* sep) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) out += (i ? sep : "") + items[i];
  return out;
}

std::string loop_phrase(const std::string& loop) { return loop.empty() ? "" : " (loop " + loop + ")"; }

class Checker {
 public:
  Checker(const OpAnalysis& a, const ArchSpec& arch) : a_(a), arch_(arch) {}

  std::vector<Violation> run() {
    matrix_dtype();
    matrix_tile();
    matrix_padding();
    buffer_unknown();
    buffer_reader();
    buffer_capacity();
    dma_alignment();
    vector_alignment();
    return std::move(out_);
  }

 private:
  // `source`: the statement behind the violation when the rule knows it (a matrix work's
  // role, not the placement of the Func it updates); else the Func's (source_of).
  void add(const char* rule, const std::string& func, const std::string& loop, int64_t value, int64_t limit,
           std::string message, std::string suggestion, Violation::Severity severity, SourceLoc source = {}) {
    if (!source.known()) source = source_of(func);
    out_.push_back(Violation{rule, a_.op, func, loop, value, limit, std::move(message), std::move(suggestion), severity,
                             std::move(source)});
  }

  // The schedule statement behind `func`: its placement, else its matrix role.
  SourceLoc source_of(const std::string& func) const {
    for (const Allocation& al : a_.allocations)
      if (al.func == func && al.source.known()) return al.source;
    for (const MatrixWork& w : a_.matrix)
      if (w.func == func && w.source.known()) return w.source;
    for (const Transfer& t : a_.transfers)
      if (t.func == func && t.source.known()) return t.source;
    for (const VectorWork& v : a_.vector)
      if (v.func == func && v.source.known()) return v.source;
    return {};
  }

  std::string supported_dtypes() const {
    std::vector<std::string> names;
    for (Dtype d : arch_.matrix.dtypes) names.push_back(to_string(d));
    return join(names, ", ");
  }

  void matrix_dtype() {
    for (const MatrixWork& w : a_.matrix) {
      if (arch_.matrix.supports(w.dtype)) continue;
      add("matrix_dtype", w.func, "", 0, 0,
          "matrix work " + w.func + " multiplies " + to_string(w.dtype) + " operands, but the matrix unit of " +
              arch_.name + " supports only " + supported_dtypes(),
          "convert " + w.func + "'s operands to one of " + supported_dtypes() + " (quantize or cast before the product)" +
              ", or compute it on the vector unit",
          Violation::error, w.source);
    }
  }

  // One tile dimension against the unit dimension it is laid along.
  // `whole`: the op's extent along the dim (0: unknown). A tile that is the whole of a dim
  // smaller than the unit pads because of the op's shape (decode's M = 1), which no
  // schedule can change: the cost model counts the idle MACs, the rules stay quiet.
  void tile_dim(const MatrixWork& w, const char* dim, int64_t extent, const std::string& loop, int64_t unit,
                const std::string& unit_name, const std::string& context, int64_t whole) {
    if (unit <= 0 || extent <= 0 || extent % unit == 0) return;
    if (whole > 0 && extent == whole && whole < unit) return;
    const int64_t padded = round_up(extent, unit);
    const double waste = static_cast<double>(padded - extent) / static_cast<double>(padded);
    const int64_t below = extent / unit * unit;
    const std::string use = below > 0 ? std::to_string(below) + " or " + std::to_string(padded)
                                      : std::to_string(padded) + " or " + std::to_string(padded + unit);
    std::string suggestion =
        loop.empty() ? std::string("the tile has no loop over ") + dim + ": give it one with extent " + use +
                           " (e.g. batch more rows into one product), or accept the padding"
                     : std::string("use ") + use + " for the " + dim + " tile" + loop_phrase(loop);
    add("matrix_tile", w.func, loop, extent, unit,
        std::string(dim) + " tile " + std::to_string(extent) + " is not a multiple of " + unit_name +
            " = " + std::to_string(unit) + context + ": " + percent(waste) + " of MACs would be padding",
        std::move(suggestion), Violation::warning, w.source);
  }

  void matrix_tile() {
    const MatrixUnit& mu = arch_.matrix;
    for (const MatrixWork& w : a_.matrix) {
      if (!mu.supports(w.dtype)) continue;  // matrix_dtype already said so
      if (mu.kind == MatrixKind::cube) {
        const CubeShape& s = mu.shapes.at(w.dtype);
        const std::string ctx = std::string(" for ") + to_string(w.dtype);
        tile_dim(w, "M", w.m, w.m_loop, s.m0, "m0", ctx, w.m_whole);
        tile_dim(w, "N", w.n, w.n_loop, s.n0, "n0", ctx, w.n_whole);
        tile_dim(w, "K", w.k, w.k_loop, s.k0, "k0", ctx, w.k_whole);
        continue;
      }
      // Systolic: the dataflow decides which GEMM dims are laid along rows and columns
      // (SCALE-Sim: WS K×N, OS M×N, IS K×M); the third dim streams and has no constraint.
      const std::string ctx = std::string(" of the ") + std::to_string(mu.rows) + "x" + std::to_string(mu.cols) + " " +
                              to_string(mu.dataflow) + " array";
      switch (mu.dataflow) {
        case Dataflow::ws:
          tile_dim(w, "K", w.k, w.k_loop, mu.rows, "rows", ctx, w.k_whole);
          tile_dim(w, "N", w.n, w.n_loop, mu.cols, "cols", ctx, w.n_whole);
          break;
        case Dataflow::os:
          tile_dim(w, "M", w.m, w.m_loop, mu.rows, "rows", ctx, w.m_whole);
          tile_dim(w, "N", w.n, w.n_loop, mu.cols, "cols", ctx, w.n_whole);
          break;
        case Dataflow::is:
          tile_dim(w, "K", w.k, w.k_loop, mu.rows, "rows", ctx, w.k_whole);
          tile_dim(w, "M", w.m, w.m_loop, mu.cols, "cols", ctx, w.m_whole);
          break;
      }
    }
  }

  std::string shape_text() const {
    std::vector<std::string> dims;
    for (const auto& [name, v] : a_.shape) dims.push_back(name + " = " + std::to_string(v));
    return join(dims, ", ");
  }

  // Tiles that are whole unit shapes but hold padding the schedule added (edge tiles).
  void matrix_padding() {
    for (const MatrixWork& w : a_.matrix) {
      const int64_t issued = w.count * w.m * w.n * w.k;
      if (w.useful_macs <= 0 || w.useful_macs >= issued) continue;  // 0: not known
      const double waste = static_cast<double>(issued - w.useful_macs) / static_cast<double>(issued);
      add("matrix_padding", w.func, "", issued - w.useful_macs, 0,
          "matrix work " + w.func + " issues " + std::to_string(issued) + " MACs for " + std::to_string(w.useful_macs) +
              " useful ones: " + percent(waste) + " are explicit padding of partial tiles",
          "pick tile extents (" + std::to_string(w.m) + "x" + std::to_string(w.n) + "x" + std::to_string(w.k) +
              " now) that divide the op's shape (" + shape_text() + ") while staying multiples of the unit's shape",
          Violation::warning, w.source);
    }
  }

  std::string buffer_list() const {
    std::vector<std::string> names;
    for (const Buffer& b : arch_.buffers) {
      std::vector<std::string> readers;
      for (Unit u : b.readers) readers.push_back(to_string(u));
      names.push_back(b.name + " (" + std::to_string(b.bytes) + " B, read by " + join(readers, "/") + ")");
    }
    return join(names, ", ");
  }

  void buffer_unknown() {
    std::set<std::pair<std::string, std::string>> seen;  // (func, buffer): one report each
    auto check = [&](const std::string& func, const std::string& buffer, const std::string& loop, const char* what) {
      if (buffer.empty() || arch_.find_buffer(buffer) || !seen.insert({func, buffer}).second) return;
      add("buffer_unknown", func, loop, 0, 0,
          std::string(what) + " " + func + " is placed in buffer '" + buffer + "', which " + arch_.name + " does not have",
          "place " + func + " in one of: " + buffer_list(), Violation::error);
    };
    for (const Allocation& al : a_.allocations) check(al.func, al.buffer, al.loop, "allocation");
    for (const Transfer& t : a_.transfers) check(t.func, t.buffer, t.loop, "transfer target");
    for (const VectorWork& v : a_.vector) check(v.func, v.buffer, "", "vector work");
  }

  void buffer_reader() {
    for (const Allocation& al : a_.allocations) {
      const Buffer* b = arch_.find_buffer(al.buffer);
      if (!b) continue;
      for (Unit u : al.readers) {
        if (b->read_by(u)) continue;
        std::vector<std::string> readers, fits;
        for (Unit r : b->readers) readers.push_back(to_string(r));
        for (const Buffer& other : arch_.buffers)
          if (other.read_by(u)) fits.push_back(other.name);
        add("buffer_reader", al.func, al.loop, 0, 0,
            std::string("the ") + to_string(u) + " unit reads " + al.func + " from buffer " + b->name + ", but " +
                b->name + " is read only by " + join(readers, "/"),
            fits.empty() ? std::string("no buffer of ") + arch_.name + " is read by the " + to_string(u) +
                               " unit: move this work to another unit"
                         : "stage " + al.func + " into a buffer the " + to_string(u) + " unit reads: " + join(fits, ", "),
            Violation::error);
      }
    }
  }

  // Allocations of one buffer are taken as live together (the nest is one path of loops;
  // sibling scopes would make this conservative). Each starts on the buffer's alignment,
  // so each copy occupies its size rounded up to it.
  void buffer_capacity() {
    for (const Buffer& b : arch_.buffers) {
      std::vector<const Allocation*> in;
      for (const Allocation& al : a_.allocations)
        if (al.buffer == b.name) in.push_back(&al);
      auto footprint = [&](const Allocation* al) { return buffer_footprint(b, al->bytes, al->double_buffered); };
      int64_t live = 0;
      for (const Allocation* al : in) live = std::min(live + footprint(al), std::numeric_limits<int64_t>::max() / 2);
      if (live <= b.bytes) continue;
      const int64_t over = live - b.bytes;
      std::sort(in.begin(), in.end(), [&](auto* x, auto* y) { return footprint(x) > footprint(y); });
      std::vector<std::string> parts;
      for (const Allocation* al : in)
        parts.push_back(al->func + " " + (al->double_buffered ? "2x" : "") + std::to_string(buffer_footprint(b, al->bytes, false)) +
                        " B");
      const Allocation* big = in.front();
      const int64_t halve_saves = footprint(big) / 2;
      std::string fix = "halve " + big->func + "'s tile" + loop_phrase(big->loop) + ": saves " +
                        std::to_string(halve_saves) + " B" +
                        (halve_saves >= over ? "" : " (not enough alone: shrink further or also other tiles)");
      for (const Allocation* al : in) {
        if (!al->double_buffered || buffer_footprint(b, al->bytes, false) < over) continue;
        fix += "; or stop double-buffering " + al->func + ": saves " + std::to_string(buffer_footprint(b, al->bytes, false)) +
               " B but exposes its transfers";
        break;
      }
      add("buffer_capacity", big->func, big->loop, live, b.bytes,
          "buffer " + b.name + " needs " + std::to_string(live) + " B live, " + std::to_string(over) + " B over its " +
              std::to_string(b.bytes) + " B: " + join(parts, " + "),
          fix, Violation::error);
    }
  }

  int64_t element_bytes_of(const std::string& func) const {
    for (const Allocation& al : a_.allocations)
      if (al.func == func && al.element_bytes > 0) return al.element_bytes;
    return 1;
  }

  void dma_alignment() {
    for (const Transfer& t : a_.transfers) {
      const DmaEngine& e = dma_engine_for(arch_, t.direction);
      const std::string what = "transfer " + (t.direction == Direction::in ? t.tensor + " -> " + t.func
                                                                             : t.func + " -> " + t.tensor);
      const int64_t eb = t.element_bytes > 0 ? t.element_bytes : element_bytes_of(t.func);
      const int64_t base = run_base_alignment(t);
      // A store the engine writes with byte enables is legal off its alignment; the cost
      // model charges the aligned units it touches (run_bytes_written).
      const bool masked = masked_store(t, e);
      if (base < e.alignment && !masked) {
        add("dma_alignment", t.func, t.loop, base, e.alignment,
            what + ": DRAM addresses are aligned to " + std::to_string(base) + " B, but DMA engine " + e.name +
                " needs " + std::to_string(e.alignment) + " B",
            "start every tile and row at a multiple of " + std::to_string(e.alignment) + " B: tile offsets and row strides in multiples of " +
                std::to_string(std::max<int64_t>(1, e.alignment / eb)) + " elements of " + std::to_string(eb) +
                " B, or pad the tensor's rows to " + std::to_string(e.alignment) + " B",
            Violation::error);
      }
      const int64_t run = transfer_run_bytes(t);
      if (run <= 0) continue;
      if (t.fractal_row_bytes > 0 && t.k_run_bytes % t.fractal_row_bytes != 0) {
        nz_fractal_rows(t, what, eb);  // the run rule in the terms of the NZ layout
      } else if (run % e.alignment != 0 && !masked) {
        const int64_t below = run / e.alignment * e.alignment, above = round_up(run, e.alignment);
        add("dma_alignment", t.func, t.loop, run, e.alignment,
            what + ": each contiguous run is " + std::to_string(run) + " B, not a multiple of DMA engine " + e.name +
                "'s " + std::to_string(e.alignment) + " B alignment",
            "make the run " + (below > 0 ? std::to_string(below) + " or " : std::string()) + std::to_string(above) +
                " B (" + (below > 0 ? std::to_string(below / eb) + " or " : std::string()) + std::to_string(above / eb) +
                " elements of " + std::to_string(eb) + " B along the innermost tile dim)",
            Violation::error);
      }
      if (e.burst_bytes > 0 && run % e.burst_bytes != 0 && burst_waste_matters(t)) {
        const int64_t bursts = ceil_div(run_bytes_written(t, e), e.burst_bytes);  // masked units included
        const double waste = static_cast<double>(bursts * e.burst_bytes - run) / static_cast<double>(bursts * e.burst_bytes);
        add("dma_alignment", t.func, t.loop, run, e.burst_bytes,
            what + ": each " + std::to_string(run) + " B run takes " + std::to_string(bursts) + " burst" +
                (bursts == 1 ? "" : "s") + " of " + std::to_string(e.burst_bytes) + " B on " + e.name + ": " +
                percent(waste) + " of burst bytes are wasted",
            "make runs multiples of " + std::to_string(e.burst_bytes) + " B (" +
                std::to_string(std::max<int64_t>(1, e.burst_bytes / eb)) +
                " elements), e.g. tile the innermost dim by a multiple of that or copy whole contiguous rows",
            Violation::warning);
      }
    }
  }

  // The burst warning points at bandwidth a schedule could win back by tiling. It stays
  // quiet where tiling cannot (the cost model charges the bursts either way): a transfer
  // issued once as one run moves everything it ever moves in that run (a decode step's
  // single 4-byte scale), and runs the schedule declares short by the op's nature, saying
  // why (NpuPlan::short_runs: a prefill's per-tile scales, 4 B per row of a tile whose rows
  // the buffer caps far below a burst of scales).
  bool burst_waste_matters(const Transfer& t) const {
    return !(t.count == 1 && transfer_runs(t) == 1) && t.short_runs.empty();
  }

  // A transfer into NZ fractals (layouts/nz.h) whose K run is not whole fractal rows: the
  // tile row ends inside a fractal row, so the next K tile starts inside one too and the
  // cube would read padding in every row.
  void nz_fractal_rows(const Transfer& t, const std::string& what, int64_t eb) {
    const int64_t f = t.fractal_row_bytes, k = t.k_run_bytes;
    const int64_t below = k / f * f, above = round_up(k, f);
    const std::string use = below > 0 ? std::to_string(below / eb) + " or " + std::to_string(above / eb)
                                      : std::to_string(above / eb) + " or " + std::to_string((above + f) / eb);
    add("dma_alignment", t.func, t.loop, k, f,
        what + ": K tile " + std::to_string(k / eb) + " is not a whole number of NZ fractals of " + std::to_string(f) +
            " B (" + std::to_string(f / eb) + " elements of " + std::to_string(eb) + " B): each tile row ends " +
            std::to_string(k % f) + " B into a fractal row",
        "make the K tile " + use + " elements, so that every tile row is whole fractal rows", Violation::error);
  }

  void vector_alignment() {
    for (const VectorWork& v : a_.vector) {
      const Buffer* b = v.buffer.empty() ? nullptr : arch_.find_buffer(v.buffer);
      if (!b || v.access_alignment >= b->alignment) continue;
      const int64_t elems = std::max<int64_t>(1, b->alignment / dtype_bytes(v.dtype));
      add("vector_alignment", v.func, "", v.access_alignment, b->alignment,
          "vector accesses of " + v.func + " into buffer " + b->name + " are aligned to " +
              std::to_string(v.access_alignment) + " B, but " + b->name + " needs " + std::to_string(b->alignment) + " B",
          "keep vector offsets multiples of " + std::to_string(elems) + " " + to_string(v.dtype) +
              " elements: vectorize by a multiple of " + std::to_string(elems) + " and keep tile extents multiples of it",
          Violation::error);
    }
  }

  const OpAnalysis& a_;
  const ArchSpec& arch_;
  std::vector<Violation> out_;
};

}  // namespace

const char* to_string(Violation::Severity s) { return s == Violation::warning ? "warning" : "error"; }

std::vector<Violation> check_rules(const OpAnalysis& analysis, const ArchSpec& arch, bool strict) {
  std::vector<Violation> all = Checker(analysis, arch).run();
  // Tiles of several shapes (full ones and the tails) often break a rule the same way.
  std::vector<Violation> out;
  for (Violation& v : all) {
    const bool seen = std::any_of(out.begin(), out.end(), [&](const Violation& o) {
      return o.rule == v.rule && o.func == v.func && o.loop == v.loop && o.message == v.message;
    });
    if (!seen) out.push_back(std::move(v));
  }
  if (strict)
    for (Violation& v : out) v.severity = Violation::error;
  return out;
}

int64_t count_errors(const std::vector<Violation>& violations) {
  return std::count_if(violations.begin(), violations.end(), [](const Violation& v) { return v.severity == Violation::error; });
}

}  // namespace npukit::sim
