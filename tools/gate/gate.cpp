#include "tools/gate/gate.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstring>
#include <optional>

#include "golden/guard.h"
#include "golden/half.h"
#include "runtime/bind.h"
#include "runtime/error.h"
#include "runtime/plugin.h"
#include "tools/gate/result_json.h"
#include "tools/gate/tensor_io.h"

namespace npukit::gate {
namespace {

// A case's expected outputs in double, by output name (GateHooks::reference).
using Expected = std::map<std::string, std::vector<double>>;

struct Group {
  const OpSpec* op;
  const GateHooks* hooks;
  std::string target;
  DType dtype;
  golden::InputClass input_class;
  int repeat = 1;  // Options::repeat
  std::string target_flags;  // Options::target_flags of this target, or "--target <target>"
  std::string op_flags;      // Options::op_flags of this op followed by a space, or ""
};

uint64_t fnv1a(const void* data, size_t n) {
  const auto* p = static_cast<const unsigned char*>(data);
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

std::string repro_line(const Group& g, int index) {
  return "npukit gate " + g.op_flags + "--op " + g.op->name + " " + g.target_flags + " --dtype " +
         std::string(dtype_name(g.dtype)) + " --class " + std::string(golden::input_class_name(g.input_class)) + " --case " +
         std::to_string(index) + (g.repeat > 1 ? " --repeat " + std::to_string(g.repeat) : "");
}

// The worst status wins: a case passes only when every output passes.
int severity(golden::Status s) {
  switch (s) {
    case golden::Status::pass: return 0;
    case golden::Status::unsupported: return 1;
    case golden::Status::mistrusted: return 2;
    case golden::Status::fail: return 3;
    case golden::Status::nondeterministic: return 3;
    case golden::Status::crashed: return 4;
  }
  return 4;
}

// `written` holds every tensor the kernel wrote: outputs and in/out tensors alike.
void check_outputs(const GateHooks& hooks, const golden::Case& c, const Expected& expected,
                   const std::map<std::string, const golden::GuardedBuffer*>& written,
                   const std::map<std::string, OutputInfo>& out_info, CaseResult& r) {
  r.status = golden::Status::pass;
  for (const auto& [name, info] : out_info) {
    const golden::GuardedBuffer& buf = *written.at(name);
    const int64_t n = static_cast<int64_t>(buf.bytes() / dtype_size(info.dtype));
    std::vector<double> want = expected.at(name);
    for (double& v : want) v = golden::round_to_dtype(v, info.dtype);
    const std::vector<double> got = decode(buf.data(), info.dtype, n);
    OutputResult o;
    o.name = name;
    o.dtype = std::string(dtype_name(info.dtype));
    o.tolerance = hooks.tolerance(c, name, info.dtype);
    o.metrics = golden::compare(got.data(), want.data(), n, info.dtype, o.tolerance.atol, o.tolerance.rtol);
    o.verdict = golden::judge(o.metrics, o.tolerance);
    if (severity(o.verdict.status) >= severity(r.status)) {
      r.status = o.verdict.status;
      r.metric = o.verdict.metric;
      r.summary = (out_info.size() > 1 ? name + ": " : "") + o.verdict.summary;
    }
    r.outputs.push_back(std::move(o));
  }
}

// Halide threads for run `k` of a repeated case: 1, 2, 1, 2, ... (the pool resizes live).
int repeat_threads(int k) { return 1 + k % 2; }

// Sets the Halide thread pools' size for a scope (the kit's and every operator plug-in's
// runtime), and puts the old size back after it.
class HalideThreads {
 public:
  explicit HalideThreads(int n) : before_(set_halide_threads(n)) {}
  ~HalideThreads() { set_halide_threads(before_); }
  HalideThreads(const HalideThreads&) = delete;
  HalideThreads& operator=(const HalideThreads&) = delete;

 private:
  int before_;
};

// Runs `call` again until g.repeat runs are done and compares every written tensor with the
// first run's bytes (`first`). Before each run the outputs get the NaN fill back and the
// in/out tensors their inputs (`originals`). On a difference, `r` says where; false then.
bool repeats_agree(const Group& g, const Call& call, std::map<std::string, golden::GuardedBuffer>& out_buffers,
                   std::map<std::string, golden::GuardedBuffer>& in_buffers,
                   const std::map<std::string, std::vector<uint8_t>>& originals,
                   const std::map<std::string, const golden::GuardedBuffer*>& written,
                   const std::map<std::string, std::vector<uint8_t>>& first,
                   const std::map<std::string, OutputInfo>& out_info, CaseResult& r) {
  for (int k = 1; k < g.repeat; ++k) {
    for (auto& [name, buf] : out_buffers) std::memset(buf.data(), 0xFF, buf.bytes());  // GuardedBuffer's fill
    for (const auto& [name, bytes] : originals) std::memcpy(in_buffers.at(name).data(), bytes.data(), bytes.size());
    set_halide_threads(repeat_threads(k));
    run_call(call);
    for (const auto& [name, want] : first) {
      const auto* got = static_cast<const uint8_t*>(written.at(name)->data());
      const auto diff = std::mismatch(want.begin(), want.end(), got).first;
      if (diff == want.end()) continue;
      const size_t element = static_cast<size_t>(diff - want.begin()) / dtype_size(out_info.at(name).dtype);
      r.status = golden::Status::nondeterministic;
      r.metric = "repeat";
      auto threads = [](int n) { return std::to_string(n) + (n == 1 ? " thread" : " threads"); };
      r.summary = "run " + std::to_string(k + 1) + " of " + std::to_string(g.repeat) + " (" +
                  threads(repeat_threads(k)) + ") differs from run 1 (" + threads(repeat_threads(0)) + ") in " + name +
                  " at element " + std::to_string(element);
      return false;
    }
  }
  return true;
}

// The cases of one op, dtype and input class, and their references, made once for every
// target gated on them: run() puts a triple's groups next to each other, and making cases
// and references is most of a CPU target's gate time (and the same for every target).
class GoldenCache {
 public:
  const std::vector<golden::Case>& cases(const Group& g) {
    if (hooks_ != g.hooks || dtype_ != g.dtype || class_ != g.input_class) {
      hooks_ = nullptr;  // holds nothing until the cases are made
      references_.clear();
      cases_ = g.hooks->cases(g.input_class, g.dtype);  // may throw NotWritten: nothing kept
      hooks_ = g.hooks;
      dtype_ = g.dtype;
      class_ = g.input_class;
    }
    return cases_;
  }
  // Case `index` of the last cases(): its reference, computed on first use.
  const Expected& reference(int index) {
    auto it = references_.find(index);
    if (it == references_.end())
      it = references_.emplace(index, hooks_->reference(cases_.at(static_cast<size_t>(index)))).first;
    return it->second;
  }

 private:
  const GateHooks* hooks_ = nullptr;  // whose cases_ these are; nullptr: none
  DType dtype_ = DType::float32;
  golden::InputClass class_{};
  std::vector<golden::Case> cases_;
  std::map<int, Expected> references_;
};

CaseResult run_case(const Group& g, int index, const golden::Case& c, GoldenCache& golden_cache) {
  CaseResult r;
  r.op = g.op->name;
  r.target = g.target;
  r.dtype = std::string(dtype_name(g.dtype));
  r.input_class = golden::input_class_name(g.input_class);
  r.case_index = index;
  r.case_name = c.name;
  r.repro = repro_line(g, index);
  const auto start = std::chrono::steady_clock::now();
  try {
    std::map<std::string, golden::GuardedBuffer> in_buffers, out_buffers;
    TensorMap tensors;
    for (const auto& [name, arr] : c.inputs) {
      auto& buf = in_buffers.emplace(name, golden::GuardedBuffer(arr.values.size() * dtype_size(arr.dtype))).first->second;
      encode(arr.values, arr.dtype, buf.data());
      tensors[name] = TensorView{buf.data(), arr.dtype, arr.shape, {}};
    }
    const auto out_info = infer_outputs(*g.op, tensors, c.params);
    std::map<std::string, const golden::GuardedBuffer*> written;
    for (const auto& [name, info] : out_info) {
      if (info.in_place) {  // an in/out tensor: its input buffer is the one to check
        written[name] = &in_buffers.at(name);
        continue;
      }
      int64_t n = 1;
      for (int64_t d : info.shape) n *= d;
      auto& buf = out_buffers.emplace(name, golden::GuardedBuffer(n * dtype_size(info.dtype))).first->second;
      tensors[name] = TensorView{buf.data(), info.dtype, info.shape, {}};
      written[name] = &buf;
    }
    std::map<std::string, uint64_t> input_hash;
    for (const auto& [name, buf] : in_buffers) input_hash[name] = fnv1a(buf.data(), buf.bytes());
    const auto updated = [&](const std::string& name) { return out_info.count(name) && out_info.at(name).in_place; };

    const Call call = bind_call(*g.op, g.target, tensors, c.params);
    std::map<std::string, std::vector<uint8_t>> originals, first;  // for --repeat
    std::optional<HalideThreads> threads;
    if (g.repeat > 1) {
      for (const auto& [name, buf] : in_buffers) {
        const auto* p = static_cast<const uint8_t*>(buf.data());
        if (updated(name)) originals[name].assign(p, p + buf.bytes());
      }
      threads.emplace(repeat_threads(0));
    }
    run_call(call);
    bool agree = true;
    if (g.repeat > 1) {
      for (const auto& [name, buf] : written) {
        const auto* p = static_cast<const uint8_t*>(buf->data());
        first[name].assign(p, p + buf->bytes());
      }
      agree = repeats_agree(g, call, out_buffers, in_buffers, originals, written, first, out_info, r);
    }

    for (const auto& [name, buf] : in_buffers) {
      if (!buf.intact()) {
        r.guard_corrupted = true;
        r.error += (updated(name) ? "in/out " : "input ") + name + ": " + buf.corruption_report() + ". ";
      } else if (!updated(name) && fnv1a(buf.data(), buf.bytes()) != input_hash[name]) {
        r.guard_corrupted = true;
        r.error += "input " + name + " was modified by the kernel. ";
      }
    }
    for (const auto& [name, buf] : out_buffers) {
      if (!buf.intact()) {
        r.guard_corrupted = true;
        r.error += "output " + name + ": " + buf.corruption_report() + ". ";
      }
    }
    if (r.guard_corrupted) {
      r.status = golden::Status::fail;
      r.metric = "guard";
      r.summary = "write outside the tensor";
    } else if (agree) {
      check_outputs(*g.hooks, c, golden_cache.reference(index), written, out_info, r);
    }
  } catch (const golden::NotWritten& e) {
    r.status = golden::Status::fail;
    r.metric = "golden";
    r.summary = "golden reference not written";
    r.error = e.what();
  } catch (const Error& e) {
    r.status = e.code() == Errc::unsupported ? golden::Status::unsupported : golden::Status::fail;
    r.metric = e.code() == Errc::unsupported ? "target" : "error";
    r.summary = e.code() == Errc::unsupported ? "no kernel here" : "kernel error";
    r.error = e.what();
  } catch (const std::exception& e) {
    r.status = golden::Status::crashed;
    r.metric = "harness";
    r.summary = "exception";
    r.error = e.what();
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

CaseResult crash_result(const Group& g, const std::string& why);

std::vector<CaseResult> run_group(const Group& g, int case_index, GoldenCache& golden_cache) {
  std::vector<CaseResult> results;
  const std::vector<golden::Case>* cases = nullptr;
  try {
    cases = &golden_cache.cases(g);
  } catch (const golden::NotWritten& e) {  // the cases are a stub too: one result says so
    CaseResult r = crash_result(g, e.what());
    r.status = golden::Status::fail;
    r.metric = "golden";
    r.summary = "golden cases not written";
    return {r};
  }
  for (int i = 0; i < static_cast<int>(cases->size()); ++i) {
    if (case_index >= 0 && i != case_index) continue;
    results.push_back(run_case(g, i, (*cases)[i], golden_cache));
  }
  return results;
}

CaseResult crash_result(const Group& g, const std::string& why) {
  CaseResult r;
  r.op = g.op->name;
  r.target = g.target;
  r.dtype = std::string(dtype_name(g.dtype));
  r.input_class = golden::input_class_name(g.input_class);
  r.case_index = -1;
  r.case_name = "(all cases)";
  r.status = golden::Status::crashed;
  r.metric = "harness";
  r.summary = "crashed";
  r.error = why;
  r.repro = repro_line(g, 0) + " --no-isolate";
  r.repro.replace(r.repro.find(" --case 0"), 9, "");
  return r;
}

bool takes_down_the_process(const std::vector<CaseResult>& results) {
  for (const CaseResult& r : results)
    if (r.guard_corrupted || r.status == golden::Status::crashed) return true;
  return false;
}

// Runs groups[from...] in one child process, which writes one JSON line per finished
// group, into `lines`. The child stops after a group that wrote outside a tensor (its
// heap is no longer trusted). `why`: how the child ended, empty when it exited 0. False
// when no child could be started.
bool run_in_child(const std::vector<Group>& groups, size_t from, int case_index, std::vector<std::string>& lines,
                  std::string& why) {
  int fds[2];
  if (pipe(fds) != 0) return false;
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return false;
  }
  if (pid == 0) {
    close(fds[0]);
    GoldenCache golden_cache;
    for (size_t i = from; i < groups.size(); ++i) {
      std::string text;
      bool stop = false;
      try {
        nlohmann::json arr = nlohmann::json::array();
        const std::vector<CaseResult> results = run_group(groups[i], case_index, golden_cache);
        for (const CaseResult& r : results) arr.push_back(to_json(r));
        text = arr.dump() + "\n";
        stop = takes_down_the_process(results);
      } catch (const std::exception& e) {
        text = nlohmann::json{{"error", e.what()}}.dump() + "\n";
        stop = true;
      }
      for (size_t off = 0; off < text.size();) {
        const ssize_t n = write(fds[1], text.data() + off, text.size() - off);
        if (n <= 0) _exit(4);
        off += static_cast<size_t>(n);
      }
      if (stop) break;
    }
    close(fds[1]);
    _exit(0);
  }
  close(fds[1]);
  std::string text;
  char buf[65536];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) text.append(buf, static_cast<size_t>(n));
  close(fds[0]);
  int wstatus = 0;
  waitpid(pid, &wstatus, 0);
  if (WIFSIGNALED(wstatus)) {
    const int sig = WTERMSIG(wstatus);
    why = "killed by signal " + std::to_string(sig) + " (" + strsignal(sig) + ")";
  } else if (WEXITSTATUS(wstatus) != 0) {
    why = "exit status " + std::to_string(WEXITSTATUS(wstatus));
  }
  for (size_t at = 0, nl; (nl = text.find('\n', at)) != std::string::npos; at = nl + 1)
    lines.push_back(text.substr(at, nl - at));  // a line cut short by a crash has no '\n'
  return true;
}

// Runs the groups in child processes and reads their results back as JSON, so that a
// kernel that crashes or corrupts the heap takes down one group, not the whole report.
// One child runs group after group (it keeps the JIT compiles the npu-sim kernels cache,
// which are most of their time); after a group that crashed it, or wrote outside a
// tensor, a fresh child goes on with the next.
std::vector<CaseResult> run_groups_isolated(const std::vector<Group>& groups, int case_index) {
  std::vector<CaseResult> results;
  for (size_t next = 0; next < groups.size();) {
    std::string why;
    std::vector<std::string> lines;
    if (!run_in_child(groups, next, case_index, lines, why)) {  // no child: in this process
      GoldenCache golden_cache;
      for (; next < groups.size(); ++next) {
        auto part = run_group(groups[next], case_index, golden_cache);
        results.insert(results.end(), part.begin(), part.end());
      }
      break;
    }
    for (const std::string& line : lines) {
      const Group& g = groups[next++];
      try {
        const nlohmann::json j = nlohmann::json::parse(line);
        if (j.is_object()) {
          results.push_back(crash_result(g, j.value("error", std::string("unknown error"))));
          continue;
        }
        for (const auto& item : j) results.push_back(case_from_json(item));
      } catch (const std::exception& e) {
        results.push_back(crash_result(g, std::string("unreadable results: ") + e.what()));
      }
    }
    // The child ended inside the group after the last it reported.
    if (next < groups.size() && (!why.empty() || lines.empty()))
      results.push_back(crash_result(groups[next++], why.empty() ? "the child process reported nothing" : why));
  }
  return results;
}

bool selected(const std::vector<std::string>& filter, const std::string& v) {
  return filter.empty() || std::find(filter.begin(), filter.end(), v) != filter.end();
}

}  // namespace

std::vector<CaseResult> run(const std::vector<const OpSpec*>& ops, const Options& options) {
  std::vector<GatedOp> gated;
  for (const OpSpec* op : ops) {
    if (!selected(options.ops, op->name)) continue;
    const GateHooks* hooks = gate_hooks(op->name);
    // An op the gate cannot check must not pass by running no case.
    if (hooks == nullptr) fail(Errc::internal, "op {} has no gate hooks (golden/{}.h, section NPUKIT_GATE_HOOKS_{})", op->name, op->name, op->name);
    gated.push_back({op, hooks});
  }
  return run(gated, options);
}

std::vector<CaseResult> run(const std::vector<GatedOp>& ops, const Options& options) {
  const std::vector<std::string> targets = options.targets.empty() ? std::vector<std::string>{"cpu"} : options.targets;
  std::vector<Group> groups;  // targets innermost: they share a triple's cases (GoldenCache)
  for (const GatedOp& op : ops) {
    if (!selected(options.ops, op.spec->name)) continue;
    const auto op_flags = options.op_flags.find(op.spec->name);
    const std::string op_flag_text = op_flags == options.op_flags.end() ? "" : op_flags->second + " ";
    for (DType dtype : op.hooks->dtypes) {
      if (!selected(options.dtypes, std::string(dtype_name(dtype)))) continue;
      for (const auto& [cls, name] : golden::kInputClasses) {
        if (!selected(options.classes, std::string(name))) continue;
        for (const std::string& target : targets) {
          const auto flags = options.target_flags.find(target);
          const std::string target_flags = flags == options.target_flags.end() ? "--target " + target : flags->second;
          groups.push_back(Group{op.spec, op.hooks, target, dtype, cls, options.repeat, target_flags, op_flag_text});
        }
      }
    }
  }
  if (options.isolate) return run_groups_isolated(groups, options.case_index);
  std::vector<CaseResult> results;
  GoldenCache golden_cache;
  for (const Group& g : groups) {
    auto part = run_group(g, options.case_index, golden_cache);
    results.insert(results.end(), part.begin(), part.end());
  }
  return results;
}

int exit_code(const std::vector<CaseResult>& results) {
  int code = 0;
  for (const CaseResult& r : results) {
    if (r.status == golden::Status::crashed || r.guard_corrupted) return 3;
    if (golden::is_failure(r.status)) code = 1;
  }
  return code;
}

}  // namespace npukit::gate
