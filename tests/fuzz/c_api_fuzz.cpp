// libFuzzer target: the C ABI (include/npukit/npukit.h) with random DLTensor descriptors.
// The input chooses an op, a target, parameters as text, an entry point (npukit_run,
// npukit_op_run, npukit_op_run_positional, npukit_op_set_constant, npukit_op_create_like)
// and per tensor its name, rank, dims, strides, dtype, lanes, device, byte offset and data
// (null, its own buffer, or another tensor's). Memory is never a lie: every buffer holds
// what its descriptor claims unless that claim overflows int64, which the kit must refuse.
// Besides the sanitizers' reports it checks the rules the C ABI promises: a wrapped size,
// lanes other than 1, a device tensor on the cpu target, non-compact strides or an output
// overlapping another tensor is never NPUKIT_OK, nor is null data for a non-empty tensor,
// and every error has a one-line message.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstdint>
#include <cstring>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "npukit/npukit.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

constexpr int64_t kMaxTensorBytes = 1 << 20;
constexpr int64_t kHuge[] = {int64_t(1) << 31, (int64_t(1) << 32) + 1, int64_t(1) << 40, int64_t(1) << 62, INT64_MAX};
const char* const kTexts[] = {"0", "1", "-1", "2", "7", "1e-5", "0.5", "1e308", "1e-400", "nan", "inf", "-inf",
                              "abc", "", "9223372036854775808", "64", "128", "int8", "half", "float32", " 1", "0x10"};

struct Arg {
  std::string name;
  bool null_name = false, null_tensor = false;
  std::vector<int64_t> shape, strides;
  bool has_strides = false;
  DLTensor dl{};
  std::vector<uint8_t> own;
  int alias = -1;       // uses tensor `alias`'s buffer
  bool overflows = false, negative = false, bad_strides = false;
  bool is_output = false;
  __int128 bytes = 0;   // what the descriptor claims, from data + byte_offset
};

__int128 claimed_bytes(const std::vector<int64_t>& shape, const DLDataType& t, bool* negative) {
  __int128 n = 1;
  *negative = false;
  constexpr __int128 kFar = __int128(1) << 100;  // far past int64: saturate there
  for (int64_t d : shape) {
    if (d < 0) *negative = true;
    n = d > 0 && n > kFar / d ? kFar : n * (d < 0 ? 0 : d);
  }
  return *negative ? 0 : n * ((t.bits * t.lanes + 7) / 8);
}

bool compact(const Arg& a) {
  if (!a.has_strides) return true;
  __int128 expect = 1;
  for (size_t i = a.shape.size(); i-- > 0;) {
    if (a.shape[i] > 1 && a.strides[i] != expect) return false;
    expect *= a.shape[i] > 0 ? a.shape[i] : 1;
  }
  return true;
}

std::string text(FuzzedDataProvider& in) {
  if (in.ConsumeBool()) return kTexts[in.ConsumeIntegralInRange<size_t>(0, std::size(kTexts) - 1)];
  return in.ConsumeRandomLengthString(24);
}

// The message of the call that just failed.
void check_last_error() {
  const std::string m = npukit_last_error();
  NPUKIT_FUZZ_CHECK(!m.empty());
  npukit::fuzz::check_message(m, "");
}

void check_status(npukit_status s) {
  NPUKIT_FUZZ_CHECK(s >= NPUKIT_OK && s <= NPUKIT_KERNEL_FAILED);  // NPUKIT_INTERNAL is a bug
  if (s != NPUKIT_OK) check_last_error();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  const size_t n_ops = npukit_op_count();
  const char* op_name = npukit_op_name(in.ConsumeIntegralInRange<size_t>(0, n_ops - 1));
  const npukit_op_info* info = npukit_op_describe(op_name);
  NPUKIT_FUZZ_CHECK(info != nullptr);
  // No GPU target: gpu-opencl loads PoCL, and a gpu-cuda run on a machine with a GPU
  // would hand the driver made-up device pointers.
  const char* const targets[] = {"cpu", "cpu:sse41", "cpu:avx2", "cpu:avx512", nullptr, "cpu:", "npu", "cpu:avx2:x"};
  const char* target = targets[in.ConsumeIntegralInRange<size_t>(0, std::size(targets) - 1)];
  const bool cpu_target = target == nullptr || std::strncmp(target, "cpu", 3) == 0;

  std::vector<std::string> param_names, param_values;
  for (size_t i = 0; i < info->n_params; ++i) {
    if (!in.ConsumeBool()) continue;
    const npukit_param_info& p = info->params[i];
    param_names.push_back(in.ConsumeIntegralInRange(0, 15) == 0 ? text(in) : p.name);
    if (p.n_choices && in.ConsumeBool()) {
      param_values.push_back(p.choices[in.ConsumeIntegralInRange<size_t>(0, p.n_choices - 1)]);
    } else {
      param_values.push_back(in.ConsumeBool() ? std::string(p.default_value) : text(in));
    }
  }
  std::vector<npukit_param> params;
  for (size_t i = 0; i < param_names.size(); ++i) params.push_back({param_names[i].c_str(), param_values[i].c_str()});
  if (!params.empty() && in.ConsumeIntegralInRange(0, 31) == 0) params.back().value = nullptr;

  // Named dimensions get one size each, so that most calls pass validation and run.
  std::map<std::string, int64_t> dims;
  std::vector<Arg> args(info->n_tensors + in.ConsumeIntegralInRange(0, 1));
  for (size_t i = 0; i < args.size(); ++i) {
    Arg& a = args[i];
    const bool declared = i < info->n_tensors;
    const npukit_tensor_info* t = declared ? &info->tensors[i] : nullptr;
    a.name = declared && in.ConsumeIntegralInRange(0, 31) != 0 ? t->name : text(in);
    a.is_output = declared && t->role == NPUKIT_OUTPUT;
    a.null_name = in.ConsumeIntegralInRange(0, 63) == 0;
    a.null_tensor = (declared && t->optional && in.ConsumeBool()) || in.ConsumeIntegralInRange(0, 63) == 0;
    size_t ndim = declared ? t->ndim : in.ConsumeIntegralInRange(0, 3);
    if (in.ConsumeIntegralInRange(0, 15) == 0) ndim = in.ConsumeIntegralInRange(0, 5);
    const int shape_kind = in.ConsumeIntegralInRange(0, 31);  // 0: huge dims, 1: a negative one
    for (size_t d = 0; d < ndim; ++d) {
      int64_t v;
      if (declared && d < t->ndim) {
        auto [it, fresh] = dims.emplace(t->dims[d], 0);
        if (fresh) it->second = in.ConsumeIntegralInRange<int64_t>(0, 9) == 0 ? 0 : int64_t(1) << in.ConsumeIntegralInRange(0, 6);
        v = it->second;
      } else {
        v = in.ConsumeIntegralInRange<int64_t>(0, 8);
      }
      if (shape_kind == 0) v = kHuge[in.ConsumeIntegralInRange<size_t>(0, std::size(kHuge) - 1)];
      if (shape_kind == 1 && d == 0) v = -in.ConsumeIntegralInRange<int64_t>(1, 3);
      if (in.ConsumeIntegralInRange(0, 31) == 0) v = in.ConsumeIntegralInRange<int64_t>(0, 16);
      a.shape.push_back(v);
    }
    DLDataType dt = declared && t->n_dtypes ? t->dtypes[in.ConsumeIntegralInRange<size_t>(0, t->n_dtypes - 1)]
                                            : DLDataType{kDLFloat, 32, 1};
    if (in.ConsumeIntegralInRange(0, 15) == 0) dt.code = in.ConsumeIntegralInRange<uint8_t>(0, 6);
    if (in.ConsumeIntegralInRange(0, 15) == 0) dt.bits = in.PickValueInArray<uint8_t>({1, 7, 8, 16, 32, 64});
    if (in.ConsumeIntegralInRange(0, 15) == 0) dt.lanes = in.PickValueInArray<uint16_t>({0, 2, 4, 16});
    a.dl.dtype = dt;
    a.dl.device = {kDLCPU, 0};
    if (in.ConsumeIntegralInRange(0, 15) == 0) {
      // Stored as the int32 a C host stores: a value outside DLDeviceType's enumerators
      // must not be loaded as the C++ enum.
      const int32_t device = in.PickValueInArray<int32_t>({kDLCUDA, kDLOpenCL, 3, 13, 0, 99, -1});
      std::memcpy(&a.dl.device.device_type, &device, sizeof device);
      a.dl.device.device_id = in.ConsumeIntegralInRange(-1, 2);
    }
    a.bytes = claimed_bytes(a.shape, dt, &a.negative);
    a.overflows = a.bytes > INT64_MAX;
    if (!a.overflows && a.bytes > kMaxTensorBytes) {
      // A shape this large over a small buffer would be the caller's lie, which no check
      // can see: shrink it.
      for (int64_t& v : a.shape) v = v > 0 ? 1 : v;
      a.bytes = claimed_bytes(a.shape, dt, &a.negative);
    }
    if (in.ConsumeIntegralInRange(0, 7) == 0) {
      a.has_strides = true;
      __int128 s = 1;
      a.strides.assign(a.shape.size(), 0);
      for (size_t d = a.shape.size(); d-- > 0;) {
        a.strides[d] = static_cast<int64_t>(s);
        s *= a.shape[d] > 0 ? a.shape[d] : 1;
        if (s > INT64_MAX) s = 1;
      }
      if (!a.strides.empty() && in.ConsumeBool()) {
        a.strides[in.ConsumeIntegralInRange<size_t>(0, a.strides.size() - 1)] = in.ConsumeIntegralInRange<int64_t>(-2, 9);
      }
      a.bad_strides = !compact(a);
    }
    a.dl.byte_offset = in.ConsumeIntegralInRange(0, 7) == 0 ? in.ConsumeIntegralInRange<uint64_t>(0, 9) : 0;
    const int data_kind = in.ConsumeIntegralInRange(0, 15);
    if (data_kind == 0) {
      a.dl.data = nullptr;
    } else if (data_kind == 1 && i > 0) {
      a.alias = in.ConsumeIntegralInRange<int>(0, static_cast<int>(i) - 1);
    } else {
      const size_t n = a.overflows ? 64 : static_cast<size_t>(a.bytes) + a.dl.byte_offset + 1;
      a.own.resize(n);
      for (size_t b = 0; b < n; ++b) a.own[b] = static_cast<uint8_t>(b * 37 + i);
      if (in.ConsumeBool()) std::memset(a.own.data(), 0, n);
      a.dl.data = a.own.data();
    }
  }
  // Aliases last, when the other buffer holds this descriptor's bytes.
  for (Arg& a : args) {
    if (a.alias < 0) continue;
    Arg& other = args[a.alias];
    const __int128 need = a.overflows ? 0 : a.bytes + a.dl.byte_offset;
    if (!other.own.empty() && static_cast<__int128>(other.own.size()) >= need) {
      a.dl.data = other.own.data();
    } else {
      a.own.resize(a.overflows ? 64 : static_cast<size_t>(a.bytes) + a.dl.byte_offset + 1);
      a.dl.data = a.own.data();
      a.alias = -1;
    }
  }
  std::vector<npukit_tensor> named;
  std::vector<const DLTensor*> positional;
  for (Arg& a : args) {
    a.dl.ndim = static_cast<int32_t>(a.shape.size());
    a.dl.shape = a.shape.empty() && in.ConsumeBool() ? nullptr : a.shape.data();
    a.dl.strides = a.has_strides ? a.strides.data() : nullptr;
    named.push_back({a.null_name ? nullptr : a.name.c_str(), a.null_tensor ? nullptr : &a.dl});
    positional.push_back(a.null_tensor ? nullptr : &a.dl);
  }

  const int entry = in.ConsumeIntegralInRange(0, 4);
  npukit_status s;
  if (entry == 0) {
    s = npukit_run(op_name, target, named.data(), named.size(), params.data(), params.size());
  } else {
    npukit_op* op = npukit_op_create(op_name, target, params.data(), params.size());
    if (op == nullptr) {
      check_last_error();
      return 0;
    }
    if (entry == 3) {
      for (size_t i = 0; i < info->n_tensors; ++i) {
        if (!info->tensors[i].constant) continue;
        check_status(npukit_op_set_constant(op, info->tensors[i].name, positional[i]));
        positional[i] = nullptr;
        args[i].null_tensor = true;  // packed: the run neither reads nor checks it
      }
    }
    if (entry == 4) {
      npukit_op* like = npukit_op_create_like(op, params.data(), params.size());
      npukit_op_destroy(op);
      op = like;
      if (op == nullptr) {
        check_last_error();
        return 0;
      }
    }
    s = entry == 1 ? npukit_op_run(op, named.data(), named.size())
                   : npukit_op_run_positional(op, positional.data(), positional.size());
    npukit_op_destroy(op);
  }
  check_status(s);
  if (s != NPUKIT_OK) return 0;
  for (size_t i = 0; i < args.size(); ++i) {
    const Arg& a = args[i];
    if (a.null_tensor) continue;
    NPUKIT_FUZZ_CHECK(!a.overflows && !a.negative);
    NPUKIT_FUZZ_CHECK(a.dl.dtype.lanes == 1);
    int32_t device = 0;
    std::memcpy(&device, &a.dl.device.device_type, sizeof device);
    NPUKIT_FUZZ_CHECK(!cpu_target || device == kDLCPU);
    NPUKIT_FUZZ_CHECK(!a.bad_strides);
    NPUKIT_FUZZ_CHECK(a.bytes == 0 || a.dl.data != nullptr);
    // An output sharing its buffer with another tensor, both non-empty, overlaps it.
    if (a.is_output && a.bytes > 0) {
      for (size_t j = 0; j < args.size(); ++j) {
        const Arg& b = args[j];
        if (j == i || b.null_tensor || b.bytes == 0 || b.dl.data == nullptr) continue;
        const auto lo = [](const Arg& x) {
          return reinterpret_cast<uintptr_t>(x.dl.data) + x.dl.byte_offset;
        };
        const auto hi = [&](const Arg& x) { return lo(x) + static_cast<uintptr_t>(x.bytes); };
        NPUKIT_FUZZ_CHECK(hi(a) <= lo(b) || hi(b) <= lo(a));
      }
    }
  }
  return 0;
}
