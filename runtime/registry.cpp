#include "runtime/registry.h"

#include <algorithm>

#include "runtime/error.h"
#include "runtime/text.h"

namespace npukit {

const std::vector<const OpSpec*>& all_ops() {
  static const std::vector<const OpSpec*> ops = {&rms_norm_spec(), &rope_spec(), &int8_gemm_spec(), &attention_spec(),
                                                     &qkv_attention_spec()};
  return ops;
}

const OpSpec& find_op(const std::string& name) {
  for (const OpSpec* op : all_ops()) {
    if (op->name == name) return *op;
  }
  const std::string list = join_names(all_ops(), [](const OpSpec* op) { return op->name; });
  fail(Errc::invalid_argument, "unknown op '" + name + "' (known: " + list + ")");
}

std::vector<std::string> all_targets() {
  std::vector<std::string> families, tiers;
  for (const OpSpec* op : all_ops()) {
    for (const auto& [family, kernel] : op->kernels) {
      if (std::find(families.begin(), families.end(), family) == families.end()) families.push_back(family);
    }
    for (const std::string& t : op->cpu_tiers) {
      if (std::find(tiers.begin(), tiers.end(), "cpu:" + t) == tiers.end()) tiers.push_back("cpu:" + t);
    }
  }
  families.insert(families.end(), tiers.begin(), tiers.end());
  return families;
}

}  // namespace npukit
