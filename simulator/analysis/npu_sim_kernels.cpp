#include "simulator/analysis/npu_sim_kernels.h"

#include <mutex>
#include <stdexcept>

#include "runtime/bind.h"
#include "runtime/error.h"
#include "runtime/registry.h"
#include "schedules/npu/jit_run.h"
#include "schedules/npu/npu_schedule.h"
#include "simulator/analysis/op_simulation.h"

namespace npukit::sim {
namespace {

using schedules::npu::ExtraInputs;
using schedules::npu::NpuSchedule;

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
    return s.stages ? resolve_composite(r, arch) : resolve_request(r, arch);
  } catch (const std::invalid_argument& e) {
    fail(Errc::unsupported, std::string("npu-sim:") + call.arch + ": " + e.what());
  }
}

// Runs a resolved schedule's pipeline, lowered for the host, on `tensors` (by pipeline
// buffer name: the call's, or a stage's views), then the schedule's extra inputs; int
// params from the knobs, the extras, the shape and the integer parameters, float params
// from the extras and the real parameters. `call` is the op's call (its `prepare` reads it).
void run_resolved(const NpuSchedule& s, const ResolvedRequest& r, const ArchSpec& arch,
                  const TensorMap& tensors, const Call& call) {
  auto pipe = runnable_npu_op(s, r.variant, arch, schedules::npu::fixed_knobs(r.knobs));
  ExtraInputs extra;
  if (s.prepare) s.prepare(call, extra);
  schedules::npu::JitArgs args;
  for (const Halide::ImageParam& p : pipe->inputs) {
    const std::string& n = p.name();
    if (auto it = extra.tensors.find(n); it != extra.tensors.end()) {
      args.inputs[n] = it->second;
    } else if (auto t = tensors.find(n); t != tensors.end()) {
      args.inputs[n] = t->second;
    } else {
      fail(Errc::internal, s.op + " on npu-sim: no tensor for pipeline buffer " + n);
    }
  }
  const auto& values = r.params.values();
  for (const Halide::Param<int32_t>& p : pipe->ints) {
    const std::string& n = p.name();
    auto v = values.find(n);
    if (auto k = r.knobs.find(n); k != r.knobs.end()) {
      args.ints[n] = k->second;
    } else if (auto e = extra.ints.find(n); e != extra.ints.end()) {
      args.ints[n] = e->second;
    } else if (auto d = r.shape.find(n); d != r.shape.end()) {
      args.ints[n] = d->second;
    } else if (v != values.end() && std::holds_alternative<int64_t>(v->second)) {
      args.ints[n] = std::get<int64_t>(v->second);
    } else {
      fail(Errc::internal, s.op + " on npu-sim: no value for int parameter " + n);
    }
  }
  for (const Halide::Param<float>& p : pipe->floats) {
    const std::string& n = p.name();
    auto v = values.find(n);
    if (auto e = extra.floats.find(n); e != extra.floats.end()) {
      args.floats[n] = e->second;
    } else if (v != values.end() && std::holds_alternative<double>(v->second)) {
      args.floats[n] = std::get<double>(v->second);
    } else {
      fail(Errc::internal, s.op + " on npu-sim: no value for float parameter " + n);
    }
  }
  TensorMap outs;
  for (const schedules::npu::NpuPipeline::Output& o : pipe->outputs) {
    auto t = tensors.find(o.tensor);
    if (t == tensors.end()) fail(Errc::internal, s.op + " on npu-sim: no tensor for output " + o.tensor);
    outs[o.tensor] = t->second;
  }
  schedules::npu::jit_realize(*pipe, args, call, outs);
}

void run_npu_sim(const NpuSchedule& s, const Call& call) {
  const ArchSpec arch = schedules::npu::call_arch(call);
  run_resolved(s, resolve_call(s, call, arch), arch, call.tensors, call);
}

// A composite: its stages in order on the call's tensors and host intermediates. A stage
// with a schedule (registered or stage-only) runs its pipeline on the stage's views; a
// stage whose op has none yet runs that op's npu-sim kernel through the registry (its
// tensors must then be dense).
void run_npu_sim_stages(const NpuSchedule& s, const Call& call) {
  const ArchSpec arch = schedules::npu::call_arch(call);
  const ResolvedRequest r = resolve_call(s, call, arch);
  const schedules::npu::NpuStages st = s.stages(r.dtype, r.shape, r.params);
  std::map<std::string, std::vector<uint8_t>> storage;
  TensorMap whole = call.tensors;  // op tensors and intermediates, dense
  for (const schedules::npu::NpuIntermediate& m : st.intermediates) {
    int64_t n = 1;
    for (int64_t e : m.shape) n *= e;
    std::vector<uint8_t>& bytes = storage[m.name];
    bytes.assign(static_cast<size_t>(n) * dtype_size(m.dtype), 0);
    whole[m.name] = TensorView{bytes.data(), m.dtype, m.shape, {}};
    if (m.fill) m.fill(call, bytes.data());
  }
  for (const schedules::npu::NpuStage& stage : st.stages) {
    TensorMap views;
    for (const auto& [name, v] : stage.tensors) {
      auto it = whole.find(v.of);
      if (it == whole.end()) {
        const OpSpec& op = *call.op;
        bool optional = false;
        for (const TensorSpec& t : op.tensors) optional = optional || (t.name == v.of && t.optional);
        if (optional) continue;  // an optional input the call leaves out (the mask)
        fail(Errc::internal, s.op + " stage '" + stage.label + "': no tensor " + v.of);
      }
      const TensorView& base = it->second;
      TensorView t = base;
      if (!v.shape.empty()) {
        t.data = static_cast<char*>(base.data) + v.offset * static_cast<int64_t>(dtype_size(base.dtype));
        t.shape = v.shape;
        t.strides = v.strides;
      }
      views[name] = t;
    }
    const NpuSchedule* own = stage.schedule ? stage.schedule : schedules::npu::find_npu_schedule(stage.op);
    if (!own) {
      const Call sc = bind_call(find_op(stage.op), "npu-sim:" + call.arch, views, stage.params);
      run_call(sc);
      continue;
    }
    // A registered op's parameters a call shows by its tensors (attention's `masked`).
    schedules::npu::NpuStage run = stage;
    if (!stage.schedule && own->call_params) {
      Call probe;
      probe.op = &find_op(stage.op);
      probe.tensors = views;
      for (const auto& [name, value] : own->call_params(probe)) run.params[name] = value;
    }
    ResolvedRequest sr;
    try {
      sr = resolve_stage(run, arch);
    } catch (const std::invalid_argument& e) {
      fail(Errc::unsupported, std::string("npu-sim:") + call.arch + ": " + s.op + " stage '" + stage.label + "': " + e.what());
    }
    Call sc;
    sc.target = call.target;
    sc.arch = call.arch;
    sc.tensors = views;
    sc.params = sr.params;
    if (!stage.schedule) {  // a registered op: its dims by name, for its `prepare`
      sc.op = &find_op(stage.op);
      for (const TensorSpec& t : sc.op->tensors) {
        auto v = views.find(t.name);
        if (v == views.end()) continue;
        for (size_t d = 0; d < t.dims.size() && d < v->second.shape.size(); ++d) sc.dims[t.dims[d]] = v->second.shape[d];
      }
    }
    run_resolved(*own, sr, arch, views, sc);
  }
}

}  // namespace

void set_npu_schedule_override(const std::string& op, const std::map<std::string, int64_t>& knobs) {
  const NpuSchedule* s = schedules::npu::find_npu_schedule(op);
  if (!s) throw std::invalid_argument("op " + op + ": no NPU schedule to override");
  for (const auto& [name, value] : knobs) check_knob(*s, name, value);
  std::lock_guard<std::mutex> lock(overrides_mutex);
  overrides[op] = knobs;
}

void register_npu_sim_kernel(const NpuSchedule& s) {
  std::vector<std::string> targets;
  for (const std::string& p : preset_names()) targets.push_back("npu-sim:" + p);
  register_kernel(
      s.op, "npu-sim", [&s](const Call& call) { s.stages ? run_npu_sim_stages(s, call) : run_npu_sim(s, call); },
      targets);
}

void register_npu_sim_kernels() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (const NpuSchedule& s : schedules::npu::npu_schedules()) register_npu_sim_kernel(s);
  });
}

}  // namespace npukit::sim
