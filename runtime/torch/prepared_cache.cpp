#include "runtime/torch/prepared_cache.h"

#include <algorithm>

#include "runtime/torch/op_binding.h"

namespace npukit::torch_ext {

PreparedPtr PreparedCache::get(const ParamValue* params, size_t n_params, const uint64_t* ids, size_t n_ids,
                               const MakePrepared& make) {
  std::lock_guard<std::mutex> lock(mutex_);
  PreparedPtr sibling;
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    if (it->ids.size() != n_ids || !std::equal(ids, ids + n_ids, it->ids.begin())) continue;
    if (!sibling) sibling = it->op;
    if (it->params.size() != n_params || !std::equal(params, params + n_params, it->params.begin())) continue;
    if (it != entries_.begin()) entries_.splice(entries_.begin(), entries_, it);
    return entries_.front().op;
  }
  PreparedPtr op = make(sibling);
  entries_.push_front(Entry{{params, params + n_params}, {ids, ids + n_ids}, op});
  if (entries_.size() > capacity_) entries_.pop_back();  // a run still holding it keeps it alive
  return op;
}

size_t PreparedCache::size() {
  std::lock_guard<std::mutex> lock(mutex_);
  return entries_.size();
}

std::vector<std::pair<std::string, std::string>> param_texts(const npukit_op_info& info, const ParamValue* values) {
  std::vector<std::pair<std::string, std::string>> out;
  for (size_t p = 0; p < info.n_params; ++p) {
    const ParamValue& v = values[p];
    std::string text = std::holds_alternative<double>(v)    ? real_text(std::get<double>(v))
                       : std::holds_alternative<int64_t>(v) ? std::to_string(std::get<int64_t>(v))
                                                            : std::get<std::string>(v);
    out.emplace_back(info.params[p].name, std::move(text));
  }
  return out;
}

PreparedPtr create_prepared(const npukit_op_info& info, const ParamValue* values, const npukit_op* like) {
  const auto texts = param_texts(info, values);
  std::vector<npukit_param> params;
  for (const auto& [name, value] : texts) params.push_back({name.c_str(), value.c_str()});
  npukit_op* op = like ? npukit_op_create_like(like, params.data(), params.size())
                       : npukit_op_create(info.name, "cpu", params.data(), params.size());
  if (op == nullptr) return nullptr;
  return PreparedPtr(op, npukit_op_destroy);
}

}  // namespace npukit::torch_ext
