#include <iostream>
#include <map>
#include <memory>

#include "runtime/bind.h"
#include "runtime/error.h"
#include "runtime/text.h"
#include "runtime/registry.h"
#include "tools/cli_args.h"
#include "tools/commands.h"
#include "tools/plugins.h"
#include "tools/npy.h"

namespace npukit::cli {
namespace {

struct RunArgs {
  std::vector<std::string> plugins;
  std::string op, target = "cpu";
  std::vector<std::string> ins, outs, params;
};

int run_op(const RunArgs& a) {
  load_plugins(a.plugins);
  const OpSpec& op = find_op(a.op);
  const std::map<std::string, std::string> params = assignment_map(a.params, "--param");
  std::map<std::string, npy::NpyArray> arrays;
  TensorMap tensors;
  for (const std::string& in : a.ins) {
    auto [name, path] = split_assignment(in, "--in");
    bool is_input = false;
    for (const TensorSpec& s : op.tensors) is_input = is_input || (s.name == name && s.read());
    if (!is_input) {
      std::vector<std::string> inputs;
      for (const TensorSpec& s : op.tensors) {
        if (s.read()) inputs.push_back(s.name);
      }
      fail(Errc::invalid_argument, "--in {}: {} has no input '{}' (inputs: {})", in, op.name, name, join_names(inputs));
    }
    if (arrays.count(name)) fail(Errc::invalid_argument, "--in {} given twice", name);
    try {
      arrays[name] = npy::read(path);
    } catch (const std::exception& e) {
      fail(Errc::invalid_argument, "--in {}={}", name, e.what());
    }
    npy::NpyArray& arr = arrays[name];
    if (arr.shape.size() > Dims::kMaxRank) {
      fail(Errc::invalid_argument, "--in {}={}: {} dimensions; npukit's tensors have at most {}", name, path,
           arr.shape.size(), Dims::kMaxRank);
    }
    tensors[name] = TensorView{arr.bytes.data(), arr.dtype, arr.shape, {}};
  }
  std::map<std::string, std::string> out_paths;
  for (const std::string& o : a.outs) {
    auto [name, path] = split_assignment(o, "--out");
    if (!out_paths.emplace(name, path).second) fail(Errc::invalid_argument, "--out {} given twice", name);
  }
  const auto infos = infer_outputs(op, tensors, params);
  for (const auto& [name, path] : out_paths) {
    if (!infos.count(name)) {
      const std::string list = join_names(infos, [](const auto& kv) { return kv.first; });
      fail(Errc::invalid_argument, "--out {}={}: {} has no output '{}' (outputs: {})", name, path, op.name, name, list);
    }
  }
  // An in/out tensor (a KV cache) is updated in the array --in read; --out NAME=FILE saves
  // it afterwards and may be left out.
  std::map<std::string, npy::NpyArray*> outputs;
  std::map<std::string, npy::NpyArray> allocated;
  for (const auto& [name, info] : infos) {
    if (info.in_place) {
      outputs[name] = &arrays.at(name);
      continue;
    }
    if (!out_paths.count(name)) fail(Errc::invalid_argument, "{}: missing --out {}=FILE.npy", op.name, name);
    npy::NpyArray& arr = allocated[name];
    outputs[name] = &arr;
    arr.dtype = info.dtype;
    arr.shape = info.shape;
    arr.bytes.assign(static_cast<size_t>(arr.size()) * dtype_size(info.dtype), 0);
    tensors[name] = TensorView{arr.bytes.data(), info.dtype, info.shape, {}};
  }
  run_call(bind_call(op, a.target, tensors, params));
  for (const auto& [name, path] : out_paths) {
    try {
      npy::write(path, *outputs.at(name));
    } catch (const std::exception& e) {
      fail(Errc::invalid_argument, "--out {}={}", name, e.what());
    }
  }
  return 0;
}

}  // namespace

void add_run(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<RunArgs>();
  CLI::App* sub = app.add_subcommand("run", "run one op on .npy tensors");
  sub->add_option("--op", args->op, "the op (see npukit list)")->required();
  sub->add_option("--target", args->target, "cpu, cpu:<tier>, gpu-opencl, gpu-cuda or npu-sim:<preset or arch.yaml> (default: cpu)");
  sub->add_option("--in", args->ins, "NAME=FILE.npy for each input tensor");
  sub->add_option("--out", args->outs, "NAME=FILE.npy for each output tensor");
  sub->add_option("--param", args->params, "NAME=VALUE for each parameter to set");
  add_plugin_option(sub, args->plugins);
  sub->callback([args, &exit_code] { exit_code = run_op(*args); });
}

}  // namespace npukit::cli
