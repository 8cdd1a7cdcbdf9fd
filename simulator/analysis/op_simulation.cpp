#include "simulator/analysis/op_simulation.h"

#include <climits>
#include <cmath>
#include <mutex>
#include <sstream>
#include <stdexcept>

#include "runtime/cpu_features.h"
#include "schedules/npu/int8_gemm.h"
#include "schedules/npu/rms_norm.h"
#include "simulator/analysis/lowered_nest.h"

namespace npukit::sim {

using schedules::npu::GemmOut;

namespace {

std::atomic<int64_t> lowerings{0};

}  // namespace

GemmOut gemm_out(const std::string& out) {
  if (out == "int32") return GemmOut::int32;
  if (out == "int8") return GemmOut::int8_fixed_point;
  if (out == "int8_float") return GemmOut::int8_float;
  if (out == "float32") return GemmOut::float32;
  if (out == "float16") return GemmOut::float16;
  throw std::invalid_argument("int8_gemm --out " + out + ": must be int32, int8, int8_float, float32 or float16");
}

namespace {

// What a pipeline's code depends on in the arch: the buffers it names and the vector width.
std::string arch_key(const ArchSpec& a) {
  const BufferRoles& r = a.roles;
  const Buffer* acc = a.find_buffer(r.matrix_acc);
  const bool acc_vector = acc && acc->read_by(Unit::vector);  // decides the epilogue's staging
  return r.matrix_a + "," + r.matrix_b + "," + r.matrix_acc + "," + r.vector + "," +
         std::to_string(a.vector.bytes_per_cycle) + "," + (acc_vector ? "acc-vector" : "acc-staged");
}

Halide::Target analysis_target() {
  return Halide::Target(halide_cpu_target(cpu_features()))
      .with_feature(Halide::Target::NoAsserts)
      .with_feature(Halide::Target::NoBoundsQuery);
}

const SimulatedOp& find_simulated(const std::string& op) {
  for (const SimulatedOp& s : simulated_ops())
    if (s.op == op) return s;
  std::string names;
  for (const SimulatedOp& s : simulated_ops()) names += (names.empty() ? "" : ", ") + s.op;
  throw std::invalid_argument("op " + op + ": no NPU schedule (ops with one: " + names + ")");
}

int64_t dim(const SimRequest& r, const std::string& name) {
  auto it = r.shape.find(name);
  if (it == r.shape.end()) throw std::invalid_argument(r.op + ": shape needs " + name);
  if (it->second <= 0 || it->second > INT32_MAX)
    throw std::invalid_argument(r.op + ": shape " + name + " = " + std::to_string(it->second) +
                                ": must be in [1, 2147483647] (Halide extents are int32)");
  return it->second;
}

int64_t knob(const SimRequest& r, const std::string& key, int64_t chosen) {
  auto it = r.schedule.find(key);
  if (it == r.schedule.end()) return chosen;
  if (it->second < (key == "double_buffer" ? 0 : 1) || (key == "double_buffer" && it->second > 1) ||
      it->second > INT32_MAX)
    throw std::invalid_argument(r.op + ": schedule " + key + " = " + std::to_string(it->second) +
                                (key == "double_buffer" ? ": must be 0 or 1" : ": must be in [1, 2147483647]"));
  return it->second;
}

// The analysis walks every tile: refuse up front what would take minutes.
struct TiledDim {
  const char* name;
  int64_t extent, tile;
};
void check_tile_count(const std::string& op, const std::vector<TiledDim>& dims) {
  constexpr double kLimit = 2e5;  // about 13 us a tile: a few seconds at most
  double tiles = 1;
  std::string what;
  for (const TiledDim& d : dims) {
    tiles *= std::ceil(double(d.extent) / double(d.tile));
    what += std::string(what.empty() ? "" : " x ") + "ceil(" + d.name + " " + std::to_string(d.extent) + " / tile " +
            std::to_string(d.tile) + ")";
  }
  if (tiles > kLimit)
    throw std::invalid_argument(op + ": " + what + " = " + std::to_string(int64_t(tiles)) +
                                " tiles: the analysis walks every tile and stops at 200,000; use larger tiles "
                                "(--schedule)");
}

}  // namespace

const std::vector<SimulatedOp>& simulated_ops() {
  static const std::vector<SimulatedOp> ops = {
      {"int8_gemm", {"M", "K", "N"}, {"int8"}, {"tile_m", "tile_n", "tile_k", "double_buffer"},
       {{"M", 1}, {"K", 4096}, {"N", 4096}}},
      {"rms_norm", {"rows", "hidden"}, {"float16", "float32"}, {"tile_rows", "double_buffer"},
       {{"rows", 16}, {"hidden", 4096}}},
  };
  return ops;
}

int64_t npu_lowerings() { return lowerings.load(); }

std::shared_ptr<CompiledNpuOp> compiled_npu_op(const std::string& op, const std::string& variant, const ArchSpec& arch,
                                               bool double_buffer) {
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<CompiledNpuOp>> cache;
  const std::string key = op + "|" + variant + "|" + arch_key(arch) + "|" + (double_buffer ? "db" : "sb");
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  auto c = std::make_shared<CompiledNpuOp>();
  if (op == "int8_gemm") {
    c->pipeline = schedules::npu::int8_gemm_npu_pipeline(arch, gemm_out(variant), double_buffer);
  } else if (op == "rms_norm") {
    if (variant != "float32" && variant != "float16")
      throw std::invalid_argument("rms_norm dtype = " + variant + ": must be float32 or float16");
    c->pipeline = schedules::npu::rms_norm_npu_pipeline(arch, variant == "float32" ? Halide::Float(32) : Halide::Float(16),
                                                        double_buffer);
  } else {
    find_simulated(op);  // throws with the list
  }
  c->nest = capture_lowered_nest(c->pipeline, analysis_target());
  ++lowerings;
  cache[key] = c;
  return c;
}

std::string lowered_nest_text(const SimRequest& r, const ArchSpec& arch) {
  const OpAnalysis a = analyse_op(r, arch);  // validates, and picks the variant
  const std::string variant = r.op == "int8_gemm" ? r.out : (r.dtype.empty() ? find_simulated(r.op).dtypes.front() : r.dtype);
  std::ostringstream s;
  s << compiled_npu_op(r.op, variant, arch, a.schedule.at("double_buffer") != 0)->nest;
  return s.str();
}

OpAnalysis analyse_op(const SimRequest& r, const ArchSpec& arch) {
  const SimulatedOp& s = find_simulated(r.op);
  for (const auto& [name, value] : r.shape) {
    if (std::find(s.shape.begin(), s.shape.end(), name) == s.shape.end())
      throw std::invalid_argument(r.op + ": unknown shape dim " + name + " (dims: " + [&] {
        std::string l;
        for (const std::string& d : s.shape) l += (l.empty() ? "" : ", ") + d;
        return l;
      }() + ")");
  }
  for (const auto& [key, value] : r.schedule) {
    if (std::find(s.schedule_keys.begin(), s.schedule_keys.end(), key) == s.schedule_keys.end()) {
      std::string l;
      for (const std::string& k : s.schedule_keys) l += (l.empty() ? "" : ", ") + k;
      throw std::invalid_argument(r.op + ": unknown schedule key " + key + " (keys: " + l + ")");
    }
  }
  const std::string dtype = r.dtype.empty() ? s.dtypes.front() : r.dtype;
  if (std::find(s.dtypes.begin(), s.dtypes.end(), dtype) == s.dtypes.end())
    throw std::invalid_argument(r.op + ": dtype " + dtype + " has no NPU schedule");
  Bindings env;
  OpAnalysis a;
  if (r.op == "int8_gemm") {
    const int64_t M = dim(r, "M"), K = dim(r, "K"), N = dim(r, "N");
    const schedules::npu::GemmTiles t = schedules::npu::choose_gemm_tiles(arch, M, N, K, gemm_out(r.out));
    const bool db = knob(r, "double_buffer", t.double_buffer);
    auto c = compiled_npu_op(r.op, r.out, arch, db);
    for (const Halide::ImageParam& p : c->pipeline.inputs) {
      if (p.name() == "a") bind_dense_buffer(env, "a", {K, M});
      else if (p.name() == "w") bind_dense_buffer(env, "w", {K, N});
      else bind_dense_buffer(env, p.name(), {N});
    }
    bind_dense_buffer(env, c->pipeline.output, {N, M});
    env["tile_m"] = knob(r, "tile_m", t.m);
    env["tile_n"] = knob(r, "tile_n", t.n);
    env["tile_k"] = knob(r, "tile_k", t.k);
    check_tile_count(r.op, {{"N", N, env["tile_n"]}, {"M", M, env["tile_m"]}, {"K", K, env["tile_k"]}});
    a = analyse_nest(c->nest, c->pipeline.plan, r.op, c->pipeline.output, env);
    a.dtype = Dtype::int8;
    a.shape = {{"M", M}, {"K", K}, {"N", N}};
    a.schedule = {{"tile_m", env["tile_m"]}, {"tile_n", env["tile_n"]}, {"tile_k", env["tile_k"]}, {"double_buffer", db}};
  } else {
    const int64_t rows = dim(r, "rows"), hidden = dim(r, "hidden");
    const int64_t esize = dtype == "float32" ? 4 : 2;
    const schedules::npu::RowTiles t = schedules::npu::choose_row_tiles(arch, rows, hidden, esize);
    const bool db = knob(r, "double_buffer", t.double_buffer);
    auto c = compiled_npu_op(r.op, dtype, arch, db);
    bind_dense_buffer(env, "x", {hidden, rows});
    bind_dense_buffer(env, "weight", {hidden});
    bind_dense_buffer(env, c->pipeline.output, {hidden, rows});
    env["tile_rows"] = knob(r, "tile_rows", t.rows);
    check_tile_count(r.op, {{"rows", rows, env["tile_rows"]}});
    a = analyse_nest(c->nest, c->pipeline.plan, r.op, c->pipeline.output, env);
    a.dtype = esize == 4 ? Dtype::fp32 : Dtype::fp16;
    a.shape = {{"rows", rows}, {"hidden", hidden}};
    a.schedule = {{"tile_rows", env["tile_rows"]}, {"double_buffer", db}};
  }
  return a;
}

}  // namespace npukit::sim
