#include "simulator/analysis/npu_sim_kernels.h"

#include <mutex>
#include <stdexcept>

#include "runtime/error.h"
#include "runtime/registry.h"
#include "schedules/npu/jit_run.h"
#include "schedules/npu/npu_schedule.h"
#include "simulator/analysis/op_simulation.h"

namespace npukit::sim {
namespace {

using schedules::npu::ExtraInputs;
using schedules::npu::NpuSchedule;

const ParamSpec* param_spec(const OpSpec& op, const std::string& name) {
  for (const ParamSpec& p : op.params)
    if (p.name == name) return &p;
  return nullptr;
}

std::mutex overrides_mutex;
std::map<std::string, std::map<std::string, int64_t>> overrides;  // op → knobs

// The schedule's request for this call: its shape, dtype and parameters.
ResolvedRequest resolve_call(const NpuSchedule& s, const Call& call, const ArchSpec& arch) {
  SimRequest r;
  r.op = s.op;
  if (s.call_shape) {
    r.shape = s.call_shape(call);
  } else {
    for (const std::string& d : s.shape) r.shape[d] = call.dim(d);
  }
  if (s.call_dtype) {
    r.dtype = s.call_dtype(call);
  } else {
    for (const TensorSpec& t : call.op->tensors) {
      if (!t.read()) continue;
      r.dtype = std::string(dtype_name(call.tensor(t.name).dtype));
      break;
    }
  }
  for (const auto& [name, value] : call.params.values()) r.params[name] = param_text(value);
  if (s.call_params)
    for (const auto& [name, value] : s.call_params(call)) r.params[name] = value;
  {
    std::lock_guard<std::mutex> lock(overrides_mutex);
    if (auto it = overrides.find(s.op); it != overrides.end()) r.schedule = it->second;
  }
  try {
    return resolve_request(r, arch);
  } catch (const std::invalid_argument& e) {
    fail(Errc::unsupported, std::string("npu-sim:") + call.arch + ": " + e.what());
  }
}

// Runs the op's NPU pipeline, lowered for the host, on the call's tensors: inputs and
// outputs by name (the call's tensors, then the schedule's extra inputs), int params from
// the knobs, the shape, the extras and the op's integer parameters, float params from the
// extras and the op's real parameters.
void run_npu_sim(const NpuSchedule& s, const Call& call) {
  const ArchSpec arch = schedules::npu::call_arch(call);
  const ResolvedRequest r = resolve_call(s, call, arch);
  auto c = compiled_npu_op(s, r.variant, arch, schedules::npu::fixed_knobs(s, r.knobs));
  ExtraInputs extra;
  if (s.prepare) s.prepare(call, extra);
  schedules::npu::JitArgs args;
  for (const Halide::ImageParam& p : c->pipeline.inputs) {
    const std::string& n = p.name();
    if (auto it = extra.tensors.find(n); it != extra.tensors.end()) {
      args.inputs[n] = it->second;
    } else if (call.tensors.count(n)) {
      args.inputs[n] = call.tensor(n);
    } else {
      fail(Errc::internal, s.op + " on npu-sim: no tensor for pipeline buffer " + n);
    }
  }
  for (const Halide::Param<int32_t>& p : c->pipeline.ints) {
    const std::string& n = p.name();
    if (auto k = r.knobs.find(n); k != r.knobs.end()) {
      args.ints[n] = k->second;
    } else if (auto e = extra.ints.find(n); e != extra.ints.end()) {
      args.ints[n] = e->second;
    } else if (auto d = r.shape.find(n); d != r.shape.end()) {
      args.ints[n] = d->second;
    } else if (const ParamSpec* ps = param_spec(*call.op, n); ps && ps->kind == ParamSpec::Kind::integer) {
      args.ints[n] = call.params.integer(n);
    } else {
      fail(Errc::internal, s.op + " on npu-sim: no value for int parameter " + n);
    }
  }
  for (const Halide::Param<float>& p : c->pipeline.floats) {
    const std::string& n = p.name();
    if (auto e = extra.floats.find(n); e != extra.floats.end()) {
      args.floats[n] = e->second;
    } else if (const ParamSpec* ps = param_spec(*call.op, n); ps && ps->kind == ParamSpec::Kind::real) {
      args.floats[n] = call.params.real(n);
    } else {
      fail(Errc::internal, s.op + " on npu-sim: no value for float parameter " + n);
    }
  }
  schedules::npu::jit_realize(c->pipeline, args, call);
}

}  // namespace

void set_npu_schedule_override(const std::string& op, const std::map<std::string, int64_t>& knobs) {
  const NpuSchedule* s = schedules::npu::find_npu_schedule(op);
  if (!s) throw std::invalid_argument("op " + op + ": no NPU schedule to override");
  for (const auto& [name, value] : knobs) {
    bool known = name == "double_buffer";
    int64_t lo = 0, hi = 1;
    for (const schedules::npu::Knob& k : s->knobs)
      if (k.name == name) known = true, lo = k.min, hi = k.max;
    if (!known) throw std::invalid_argument(op + ": unknown schedule key " + name);
    if (value < lo || value > hi)
      throw std::invalid_argument(op + ": schedule " + name + " = " + std::to_string(value) + ": must be in [" +
                                  std::to_string(lo) + ", " + std::to_string(hi) + "]");
  }
  std::lock_guard<std::mutex> lock(overrides_mutex);
  overrides[op] = knobs;
}

void register_npu_sim_kernels() {
  static std::once_flag once;
  std::call_once(once, [] {
    std::vector<std::string> targets;
    for (const std::string& p : preset_names()) targets.push_back("npu-sim:" + p);
    for (const NpuSchedule& s : schedules::npu::npu_schedules())
      register_kernel(s.op, "npu-sim", [&s](const Call& call) { run_npu_sim(s, call); }, targets);
  });
}

}  // namespace npukit::sim
