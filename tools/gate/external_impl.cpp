#include "tools/gate/external_impl.h"

#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <csignal>
#include <cstring>

#include "npukit/external_kernel.h"
#include "runtime/dlpack_view.h"
#include "runtime/error.h"
#include "runtime/registry.h"
#include "runtime/message.h"

namespace npukit::gate {
namespace {

const char* role_name(TensorSpec::Role r) {
  switch (r) {
    case TensorSpec::Role::input: return "input";
    case TensorSpec::Role::output: return "output";
    case TensorSpec::Role::inout: return "inout";
  }
  return "?";
}

const char* kind_name(ParamSpec::Kind k) {
  switch (k) {
    case ParamSpec::Kind::real: return "real";
    case ParamSpec::Kind::integer: return "integer";
    case ParamSpec::Kind::choice: return "choice";
  }
  return "?";
}

// Calls `fn` with the Call's tensors and parameters in the order of the op's entry.
void call_external(npukit_external_kernel fn, const std::string& where, const Call& call) {
  const OpSpec& op = *call.op;
  std::vector<DLTensor> tensors(op.tensors.size());
  std::vector<const DLTensor*> pointers(op.tensors.size(), nullptr);
  std::vector<std::vector<int64_t>> shapes(op.tensors.size());
  for (size_t i = 0; i < op.tensors.size(); ++i) {
    auto it = call.tensors.find(op.tensors[i].name);
    if (it == call.tensors.end()) continue;  // an absent optional input
    const TensorView& v = it->second;
    // bind_call has checked contiguity; the gate's tensors are host memory.
    if (!v.contiguous() || v.memory != TensorView::Memory::host)
      fail(Errc::unsupported, "{}: external kernels take C-contiguous CPU tensors ({})", where, op.tensors[i].name);
    shapes[i] = v.shape.to_vector();
    DLTensor& t = tensors[i];
    t.data = v.data;
    t.device = DLDevice{kDLCPU, 0};
    t.ndim = static_cast<int32_t>(v.shape.size());
    t.dtype = dlpack_dtype(v.dtype);
    t.shape = shapes[i].data();
    t.strides = nullptr;
    t.byte_offset = 0;
    pointers[i] = &t;
  }
  std::vector<npukit_param_value> params(op.params.size());
  std::vector<std::string> choices(op.params.size());
  for (size_t i = 0; i < op.params.size(); ++i) {
    const ParamSpec& p = op.params[i];
    npukit_param_value& v = params[i];
    std::memset(&v, 0, sizeof v);
    switch (p.kind) {
      case ParamSpec::Kind::real: v.kind = NPUKIT_PARAM_REAL; v.real = call.params.real(p.name); break;
      case ParamSpec::Kind::integer: v.kind = NPUKIT_PARAM_INTEGER; v.integer = call.params.integer(p.name); break;
      case ParamSpec::Kind::choice:
        v.kind = NPUKIT_PARAM_CHOICE;
        choices[i] = call.params.choice(p.name);
        v.choice = choices[i].c_str();
        break;
    }
  }
  char error[1024] = "";
  const int status = fn(pointers.data(), pointers.size(), params.data(), params.size(), error, sizeof error);
  if (status == NPUKIT_OK) return;
  error[sizeof error - 1] = '\0';
  const std::string what = where + " returned " + std::to_string(status) + (error[0] ? ": " + std::string(error) : "");
  fail(status == NPUKIT_UNSUPPORTED ? Errc::unsupported : Errc::kernel_failed, what);
}

bool valid_target_name(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '_' || c == '-' || c == '.';
  });
}

}  // namespace

std::string loading_crashes(const std::string& file) {
  const pid_t pid = fork();
  if (pid < 0) return "";  // no child: the parent's dlopen is all there is
  if (pid == 0) _exit(dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL) ? 0 : 1);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return "";
  }
  if (WIFSIGNALED(status)) return fmt::format("signal {} ({})", WTERMSIG(status), strsignal(WTERMSIG(status)));
  if (WIFEXITED(status) && WEXITSTATUS(status) > 1) return fmt::format("exit status {}", WEXITSTATUS(status));
  return "";
}

std::string register_external_kernel(const OpSpec& op, const std::string& impl, std::string target_name) {
  const size_t colon = impl.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == impl.size())
    fail(Errc::invalid_argument, "--impl {}: expected PATH.so:SYMBOL", impl);
  const std::string path = impl.substr(0, colon), symbol = impl.substr(colon + 1);
  if (target_name.empty()) target_name = symbol;
  if (!valid_target_name(target_name))
    fail(Errc::invalid_argument, "--target-name {}: must be letters, digits, '_', '-' or '.' (no ':')", target_name);
  for (const std::string& t : all_targets()) {
    if (t == target_name || t.substr(0, t.find(':')) == target_name)
      fail(Errc::invalid_argument, "--target-name {}: is a built-in target; pick another name", target_name);
  }
  // A bare file name would make dlopen search the library path instead of loading the file.
  const std::string file = path.find('/') == std::string::npos ? "./" + path : path;
  if (const std::string how = loading_crashes(file); !how.empty())
    throw ExternalLoadCrash(message("--impl {}: loading {} ended its process by {}; nothing was gated", impl, path, how));
  // Never closed: the kernel stays registered for the life of the process.
  void* lib = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* why = dlerror();
    fail(Errc::invalid_argument, "--impl {}: cannot load {} ({})", impl, path, (why ? why : "dlopen failed"));
  }
  void* sym = dlsym(lib, symbol.c_str());
  if (sym == nullptr)
    fail(Errc::invalid_argument, "--impl {}: {} has no symbol '{}' (it must be extern \"C\")", impl, path, symbol);
  const auto fn = reinterpret_cast<npukit_external_kernel>(sym);
  const std::string where = "external kernel " + symbol + " (" + path + ")";
  register_kernel(op.name, target_name, [fn, where](const Call& call) { call_external(fn, where, call); }, {});
  return target_name;
}

std::string external_signature(const OpSpec& op) {
  std::string out = "int SYMBOL(const DLTensor* const* tensors, size_t n_tensors = " + std::to_string(op.tensors.size()) +
                    ", const npukit_param_value* params, size_t n_params = " + std::to_string(op.params.size()) +
                    ", char* error, size_t error_size)\n";
  for (size_t i = 0; i < op.tensors.size(); ++i) {
    const TensorSpec& t = op.tensors[i];
    std::string dtypes;
    for (DType d : t.dtypes) dtypes += (dtypes.empty() ? "" : " | ") + std::string(dtype_name(d));
    if (!t.same_dtype_as.empty()) dtypes += ", the dtype of " + t.same_dtype_as;
    if (!t.dtype_param.empty()) dtypes += ", the dtype parameter " + t.dtype_param + " names";
    out += "  tensors[" + std::to_string(i) + "] " + t.name + ": " + role_name(t.role) +
           (t.optional ? " (optional: NULL when absent)" : "") + " [" + join_names(t.dims) + "] " + dtypes + "\n";
  }
  for (size_t i = 0; i < op.params.size(); ++i) {
    out += "  params[" + std::to_string(i) + "] " + op.params[i].name + ": " + kind_name(op.params[i].kind) + "\n";
  }
  return out;
}

}  // namespace npukit::gate
