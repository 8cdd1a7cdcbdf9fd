#include "simulator/analysis/nest_env.h"

#include <memory>

namespace npukit::sim {

using namespace Halide;
using namespace Halide::Internal;

void NestEnv::reset(const Bindings& env) {
  std::fill(frame_.known.begin(), frame_.known.end(), 0);
  for (const auto& [name, value] : env) frame_.set(frame_.slot(name), value);
}

std::optional<int64_t> NestEnv::eval(const Expr& e) {
  auto it = programs_.find(e.get());
  if (it == programs_.end()) it = programs_.emplace(e.get(), std::make_pair(e, IntProgram(e, frame_))).first;
  return it->second.second.run(frame_);
}

int NestEnv::slot(const IRNode* node, const std::string& name) {
  auto it = slots_.find(node);
  if (it == slots_.end()) it = slots_.emplace(node, frame_.slot(name)).first;
  return it->second;
}

NestEnv& nest_env(const Stmt& nest) {
  struct Entry {
    Stmt nest;  // held, so that its address names no other nest later
    std::unique_ptr<NestEnv> env;
  };
  thread_local std::unordered_map<const IRNode*, Entry> envs;
  auto [it, fresh] = envs.try_emplace(nest.get());
  if (fresh) it->second = Entry{nest, std::make_unique<NestEnv>()};
  return *it->second.env;
}

}  // namespace npukit::sim
