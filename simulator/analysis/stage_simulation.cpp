#include "simulator/analysis/stage_simulation.h"

#include <map>
#include <stdexcept>

#include "simulator/rules/footprint.h"

namespace npukit::sim {

using schedules::npu::NpuStage;
using schedules::npu::NpuStages;
using schedules::npu::NpuView;

namespace {

std::string plain(const std::string& name) { return name.substr(0, name.find('$')); }  // Halide's $n suffix off

int64_t numel(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t e : shape) n *= e;
  return n;
}

// The stage tensor each DRAM name in a stage's analysis stands for: inputs are named as
// the tensors, outputs by their Func (NpuPipeline::outputs).
std::map<std::string, std::string> tensor_of_dram_name(const ResolvedRequest& r, const ArchSpec& arch) {
  std::map<std::string, std::string> m;
  auto c = compiled_npu_op(*r.schedule, r.variant, arch, schedules::npu::fixed_knobs(r.knobs));
  for (const Halide::ImageParam& p : c->pipeline.inputs) m[plain(p.name())] = p.name();
  for (const schedules::npu::NpuPipeline::Output& o : c->pipeline.outputs) m[plain(o.func)] = o.tensor;
  return m;
}

struct StageFacts {
  ResolvedRequest request;
  std::map<std::string, std::string> tensors;  // DRAM name in the analysis → stage tensor
};

// Traffic of every intermediate a stage produces: the producer's stores, the consumers'
// loads, and whether the whole tensor fits where each consumer stages its tiles of it,
// beside that consumer's other allocations (the tile it would replace left out).
std::vector<IntermediateTraffic> intermediate_traffic(const NpuStages& st, const std::vector<StageFacts>& facts,
                                                      const StagedResult& r, const ArchSpec& arch) {
  std::vector<IntermediateTraffic> out;
  for (const schedules::npu::NpuIntermediate& m : st.intermediates) {
    IntermediateTraffic t;
    t.name = m.name;
    t.bytes = numel(m.shape) * static_cast<int64_t>(dtype_size(m.dtype));
    bool fits = true;
    for (size_t i = 0; i < st.stages.size(); ++i) {
      const NpuStage& stage = st.stages[i];
      const OpAnalysis& a = r.stages[i].result.analysis;
      for (const Transfer& x : a.transfers) {
        auto tn = facts[i].tensors.find(plain(x.tensor));
        if (tn == facts[i].tensors.end()) continue;
        auto view = stage.tensors.find(tn->second);
        if (view == stage.tensors.end() || view->second.of != m.name) continue;
        if (x.direction == Direction::out) {
          t.written += x.total_bytes();
          t.producer = stage.label;
          continue;
        }
        t.read += x.total_bytes();
        if (t.consumers.empty() || t.consumers.back() != stage.label) {
          t.consumers.push_back(stage.label);
          t.buffers.push_back(x.buffer);
          std::vector<PlannedAllocation> planned;
          for (const Allocation& al : a.allocations)
            if (al.func != x.func) planned.push_back({al.buffer, al.bytes, al.double_buffered});
          planned.push_back({x.buffer, t.bytes, false});
          if (!fits_buffers(arch, planned)) {
            fits = false;
            if (t.why.empty())
              t.why = std::to_string(t.bytes) + " B do not fit " + x.buffer + " beside " + stage.label +
                      "'s other allocations";
          }
        }
      }
    }
    if (t.producer.empty()) continue;  // made by the host or the scalar unit (positions): no DMA traffic
    t.fits = fits && !t.consumers.empty();
    if (t.consumers.empty()) t.why = "no stage reads it back";
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace

bool is_composite(const std::string& op) {
  const schedules::npu::NpuSchedule* s = schedules::npu::find_npu_schedule(op);
  return s && s->stages;
}

NpuStages request_stages(const SimRequest& request, const ArchSpec& arch) {
  const ResolvedRequest r = resolve_composite(request, arch);
  return r.schedule->stages(r.dtype, r.shape, r.params);
}

StagedResult simulate_stages(const SimRequest& request, const ArchSpec& arch, bool strict) {
  const ResolvedRequest r = resolve_composite(request, arch);
  const NpuStages st = r.schedule->stages(r.dtype, r.shape, r.params);
  StagedResult out;
  out.op = r.schedule->op;
  out.dtype = r.dtype;
  std::vector<StageFacts> facts;
  for (const NpuStage& stage : st.stages) {
    try {
      StageFacts f{resolve_stage(stage, arch), {}};
      const OpAnalysis a = analyse_resolved(f.request, f.request.knobs, arch);
      f.tensors = tensor_of_dram_name(f.request, arch);
      out.stages.push_back(StageSimulation{stage.label, f.request.schedule->op, simulate(a, arch, strict)});
      facts.push_back(std::move(f));
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(out.op + " stage '" + stage.label + "': " + e.what());
    }
  }
  sum_stages(out, r.shape, out.stages.empty() ? Dtype::fp32 : out.stages.back().result.analysis.dtype);
  out.intermediates = intermediate_traffic(st, facts, out, arch);
  return out;
}

}  // namespace npukit::sim
