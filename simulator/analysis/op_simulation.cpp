#include "simulator/analysis/op_simulation.h"

#include <algorithm>
#include <atomic>
#include <climits>
#include <cmath>
#include <mutex>
#include <stdexcept>

#include <fmt/ostream.h>

#include "runtime/cpu_features.h"
#include "runtime/error.h"
#include "runtime/message.h"
#include "runtime/registry.h"
#include "simulator/analysis/lowered_nest.h"

namespace npukit::sim {

using schedules::npu::Knob;
using schedules::npu::Knobs;
using schedules::npu::NpuSchedule;
using schedules::npu::Shape;

namespace {

std::atomic<int64_t> lowerings{0};

template <class Range, class F>
std::string names_of(const Range& v, F name) {
  std::string out;
  for (const auto& x : v) out += (out.empty() ? "" : ", ") + name(x);
  return out;
}

// What a pipeline's code may depend on in the arch (buffers by role and who reads them,
// the vector width, the matrix unit's kind, dtypes and shape): variants built for two
// specs that agree on these are the same code.
std::string arch_key(const ArchSpec& a) {
  std::string k;
  const BufferRoles& r = a.roles;
  append(k, "{},{},{},{},{}", r.matrix_a, r.matrix_b, r.matrix_acc, r.vector, a.vector.bytes_per_cycle);
  for (const Buffer& b : a.buffers) {
    append(k, "|{}:{}", b.name, b.alignment);
    for (Unit u : b.readers) append(k, ",{}", to_string(u));
  }
  append(k, "|{}:{}x{}:{}:{}", to_string(a.matrix.kind), a.matrix.rows, a.matrix.cols, to_string(a.matrix.dataflow),
         to_string(a.matrix.layout));
  for (Dtype d : a.matrix.dtypes) append(k, ",{}", to_string(d));
  for (const auto& [d, s] : a.matrix.shapes) append(k, ",{}x{}x{}", s.m0, s.k0, s.n0);
  return k;
}

Halide::Target analysis_target() {
  return Halide::Target(halide_cpu_target(cpu_features()))
      .with_feature(Halide::Target::NoAsserts)
      .with_feature(Halide::Target::NoBoundsQuery);
}

const NpuSchedule& find_schedule(const std::string& op) {
  if (const NpuSchedule* s = schedules::npu::find_npu_schedule(op)) return *s;
  throw std::invalid_argument("op " + op + ": no NPU schedule (ops with one: " +
                              names_of(schedules::npu::npu_schedules(), [](const NpuSchedule& s) { return s.op; }) + ")");
}

const Knob* find_knob(const NpuSchedule& s, const std::string& name) {
  for (const Knob& k : s.knobs)
    if (k.name == name) return &k;
  return nullptr;
}

}  // namespace

void check_knob(const NpuSchedule& s, const std::string& name, int64_t value) {
  int64_t lo = 0, hi = 1, step = 1;
  if (name != "double_buffer") {
    const Knob* k = find_knob(s, name);
    if (!k)
      throw std::invalid_argument(s.op + ": unknown schedule key " + name + " (keys: " +
                                  names_of(s.knobs, [](const Knob& k) { return k.name; }) + ", double_buffer)");
    lo = k->min, hi = k->max, step = k->multiple_of;
  }
  if (value < lo || value > hi)
    throw std::invalid_argument(s.op + ": schedule " + name + " = " + std::to_string(value) + ": must be in [" +
                                std::to_string(lo) + ", " + std::to_string(hi) + "]");
  if (value % step != 0)
    throw std::invalid_argument(s.op + ": schedule " + name + " = " + std::to_string(value) + ": must be a multiple of " +
                                std::to_string(step));
}

namespace {

// The analysis walks every tile: refuse up front what would take minutes.
void check_tile_count(const NpuSchedule& s, const Shape& shape, const Knobs& knobs) {
  constexpr double kLimit = 2e5;  // about 13 us a tile: a few seconds at most
  double tiles = 1;
  std::string what;
  for (const Knob& k : s.knobs) {
    if (k.tiles.empty()) continue;
    const int64_t extent = shape.at(k.tiles), tile = knobs.at(k.name);
    tiles *= std::ceil(double(extent) / double(tile));
    what += std::string(what.empty() ? "" : " x ") + "ceil(" + k.tiles + " " + std::to_string(extent) + " / " + k.name +
            " " + std::to_string(tile) + ")";
  }
  if (tiles > kLimit)
    throw std::invalid_argument(s.op + ": " + what + " = " + std::to_string(int64_t(tiles)) +
                                " tiles: the analysis walks every tile and stops at 200,000; use larger tiles "
                                "(--schedule)");
}

Dtype analysis_dtype(const std::string& dtype) {
  if (dtype == "int8") return Dtype::int8;
  if (dtype == "float16") return Dtype::fp16;
  if (dtype == "int32") return Dtype::int32;
  return Dtype::fp32;
}

// Extents (innermost first) of a pipeline buffer named `name`: the schedule's own, or the
// op tensor of that name's dims, reversed, taken from the shape.
std::vector<int64_t> buffer_extents(const NpuSchedule& s, const std::map<std::string, std::vector<int64_t>>& extra,
                                    const Shape& shape, const std::string& name) {
  if (auto it = extra.find(name); it != extra.end()) return it->second;
  if (s.stage_only)
    throw std::logic_error(s.op + " NPU stage: pipeline buffer " + name + " has no extra_extents (a stage-only "
                           "schedule has no op tensors)");
  const OpSpec& op = find_op(s.op);
  for (const TensorSpec& t : op.tensors) {
    if (t.name != name) continue;
    std::vector<int64_t> ext;
    for (auto d = t.dims.rbegin(); d != t.dims.rend(); ++d) {
      auto v = shape.find(*d);
      if (v == shape.end())
        throw std::logic_error(s.op + " NPU schedule: tensor " + name + "'s dim " + *d +
                               " is not in its shape; give the buffer's extents in extra_extents");
      ext.push_back(v->second);
    }
    return ext;
  }
  throw std::logic_error(s.op + " NPU schedule: pipeline buffer " + name + " is no op tensor and has no extra_extents");
}

}  // namespace

int64_t npu_lowerings() { return lowerings.load(); }

namespace {

std::string variant_key(const NpuSchedule& s, const std::string& variant, const ArchSpec& arch, const Knobs& fixed) {
  std::string key = s.op + "|" + variant + "|" + arch_key(arch);
  for (const auto& [name, value] : fixed) key += "|" + name + "=" + std::to_string(value);
  return key;
}

}  // namespace

std::shared_ptr<schedules::npu::NpuPipeline> runnable_npu_op(const NpuSchedule& s, const std::string& variant,
                                                             const ArchSpec& arch, const Knobs& fixed) {
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<schedules::npu::NpuPipeline>> cache;
  const std::string key = variant_key(s, variant, arch, fixed);
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  auto p = std::make_shared<schedules::npu::NpuPipeline>(s.build(arch, variant, fixed));
  cache[key] = p;
  return p;
}

std::shared_ptr<CompiledNpuOp> compiled_npu_op(const NpuSchedule& s, const std::string& variant, const ArchSpec& arch,
                                               const Knobs& fixed) {
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<CompiledNpuOp>> cache;
  const std::string key = variant_key(s, variant, arch, fixed);
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  auto c = std::make_shared<CompiledNpuOp>();
  c->pipeline = s.build(arch, variant, fixed);
  c->nest = capture_lowered_nest(c->pipeline, analysis_target());
  ++lowerings;
  cache[key] = c;
  return c;
}

namespace {

// The request for `s`, whose op parameters are `specs` (the OpSpec's, or a stage-only
// schedule's own): the shape (the decode shape when empty), the knob overrides, the dtype
// and the parameters checked; the variant and the chosen knobs when `s` is no composite.
ResolvedRequest resolve_with(const NpuSchedule& s, const std::vector<ParamSpec>& specs, const SimRequest& r,
                             const ArchSpec& arch) {
  ResolvedRequest out;
  out.schedule = &s;
  out.shape = r.shape.empty() ? s.decode : r.shape;
  for (const auto& [name, value] : out.shape) {
    if (std::find(s.shape.begin(), s.shape.end(), name) == s.shape.end())
      throw std::invalid_argument(s.op + ": unknown shape dim " + name + " (dims: " +
                                  names_of(s.shape, [](const std::string& d) { return d; }) + ")");
    if (value <= 0 || value > INT32_MAX)
      throw std::invalid_argument(s.op + ": shape " + name + " = " + std::to_string(value) +
                                  ": must be in [1, 2147483647] (Halide extents are int32)");
  }
  for (const std::string& d : s.shape) {
    if (!out.shape.count(d)) throw std::invalid_argument(s.op + ": shape needs " + d);
  }
  if (s.stages && !r.schedule.empty())
    throw std::invalid_argument(s.op + ": --schedule " + r.schedule.begin()->first +
                                ": a composite schedule has no knobs of its own; each stage takes its chooser's");
  for (const auto& [key, value] : r.schedule) check_knob(s, key, value);
  out.dtype = r.dtype.empty() ? s.dtypes.front() : r.dtype;
  if (std::find(s.dtypes.begin(), s.dtypes.end(), out.dtype) == s.dtypes.end())
    throw std::invalid_argument(s.op + ": dtype " + out.dtype + " has no NPU schedule (dtypes: " +
                                names_of(s.dtypes, [](const std::string& d) { return d; }) + ")");
  try {
    out.params = resolve_params(s.op, specs, r.params);
  } catch (const Error& e) {
    throw std::invalid_argument(e.what());
  }
  if (s.stages) return out;  // its stages resolve their own
  out.variant = s.variant(out.dtype, out.params, out.shape);
  out.knobs = s.choose(arch, out.variant, out.shape);
  for (const auto& [key, value] : r.schedule) out.knobs[key] = value;
  for (const Knob& k : s.knobs) {
    if (!out.knobs.count(k.name)) throw std::logic_error(s.op + " NPU schedule: its chooser sets no " + k.name);
  }
  if (!out.knobs.count("double_buffer")) throw std::logic_error(s.op + " NPU schedule: its chooser sets no double_buffer");
  return out;
}

// An op's parameters and its schedule's analysis parameters (NpuSchedule::sim_params).
std::vector<ParamSpec> op_specs(const NpuSchedule& s) {
  std::vector<ParamSpec> specs = find_op(s.op).params;
  specs.insert(specs.end(), s.sim_params.begin(), s.sim_params.end());
  return specs;
}

}  // namespace

ResolvedRequest resolve_request(const SimRequest& r, const ArchSpec& arch) {
  const NpuSchedule& s = find_schedule(r.op);
  ResolvedRequest out = resolve_with(s, op_specs(s), r, arch);
  if (s.stages)
    throw std::invalid_argument(r.op + ": a composite NPU schedule (a sequence of stages): simulate it as its stages "
                                "(npukit sim --op " + r.op + " does); tune and --nest take one stage's op");
  return out;
}

ResolvedRequest resolve_composite(const SimRequest& r, const ArchSpec& arch) {
  const NpuSchedule& s = find_schedule(r.op);
  if (!s.stages) throw std::invalid_argument(r.op + ": not a composite NPU schedule");
  return resolve_with(s, op_specs(s), r, arch);
}

ResolvedRequest resolve_stage(const schedules::npu::NpuStage& stage, const ArchSpec& arch) {
  SimRequest r;
  r.op = stage.op;
  r.shape = stage.shape;
  r.dtype = stage.dtype;
  r.params = stage.params;
  if (stage.schedule) return resolve_with(*stage.schedule, stage.schedule->params, r, arch);
  return resolve_request(r, arch);
}

OpAnalysis analyse_resolved(const ResolvedRequest& r, const Knobs& knobs, const ArchSpec& arch, Walk walk) {
  const NpuSchedule& s = *r.schedule;
  for (const auto& [key, value] : knobs) check_knob(s, key, value);
  check_tile_count(s, r.shape, knobs);
  auto c = compiled_npu_op(s, r.variant, arch, schedules::npu::fixed_knobs(knobs));
  const auto extra = s.extra_extents ? s.extra_extents(r.shape) : std::map<std::string, std::vector<int64_t>>{};
  const auto ints = s.analysis_ints ? s.analysis_ints(r.shape) : std::map<std::string, int64_t>{};
  Bindings env;
  for (const Halide::ImageParam& p : c->pipeline.inputs)
    bind_dense_buffer(env, p.name(), buffer_extents(s, extra, r.shape, p.name()));
  for (const schedules::npu::NpuPipeline::Output& o : c->pipeline.outputs)
    bind_dense_buffer(env, o.func, buffer_extents(s, extra, r.shape, o.tensor));
  // Int params: a knob, the schedule's analysis value, a shape dim, or an integer op
  // parameter of that name; values that do not shape the nest (zero points) need not be exact.
  for (const Halide::Param<int32_t>& p : c->pipeline.ints) {
    int64_t v = 0;
    if (auto k = knobs.find(p.name()); k != knobs.end()) {
      v = k->second;
    } else if (auto i = ints.find(p.name()); i != ints.end()) {
      v = i->second;
    } else if (auto d = r.shape.find(p.name()); d != r.shape.end()) {
      v = d->second;
    } else if (auto q = r.params.values().find(p.name());
               q != r.params.values().end() && std::holds_alternative<int64_t>(q->second)) {
      v = std::get<int64_t>(q->second);
    }
    env[p.name()] = v;
  }
  OpAnalysis a = analyse_nest(c->nest, c->pipeline.plan, s.op, c->pipeline.output_funcs(), env, walk);
  a.dtype = analysis_dtype(r.dtype);
  a.shape = r.shape;
  a.schedule = knobs;
  return a;
}

OpAnalysis analyse_op(const SimRequest& request, const ArchSpec& arch) {
  const ResolvedRequest r = resolve_request(request, arch);
  return analyse_resolved(r, r.knobs, arch);
}

std::string lowered_nest_text(const SimRequest& request, const ArchSpec& arch) {
  const ResolvedRequest r = resolve_request(request, arch);
  // The analysis's checks of the request, not the analysis: the nest is what an author
  // reads when the analysis cannot read it.
  for (const auto& [key, value] : r.knobs) check_knob(*r.schedule, key, value);
  check_tile_count(*r.schedule, r.shape, r.knobs);
  return fmt::format("{}", fmt::streamed(compiled_npu_op(*r.schedule, r.variant, arch, schedules::npu::fixed_knobs(r.knobs))->nest));
}

}  // namespace npukit::sim
