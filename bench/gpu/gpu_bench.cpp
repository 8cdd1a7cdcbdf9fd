// The GPU bench that bench/gpu/run_device.sh runs on a machine with an NVIDIA GPU: each op
// with a gpu-cuda kernel at its decode and prefill shapes, as GB/s of the bytes it must
// move and as a ratio to the device-to-device copy bandwidth (cuMemcpyDtoD, read + write
// bytes) measured in the same run. Ops that take CUDA tensors are timed on device memory
// (no transfers in the timing), their constants (int8_gemm's w) as a prepared op holds them:
// packed once and kept on the device; the others on host tensors, marked as including the
// copies. Every row also times the same call on host tensors (copied to the device and
// back by the call) and reports the difference of the medians as host_copy_us, with the
// bytes those copies move.
// int8_gemm rows with int32 output also time cuBLASLt's int8 GEMM on device copies of the
// same a and w, and check that its int32 result equals npukit's bit for bit; its epilogue
// rows (float32, float16, int8 requantized both ways) report epilogue_us against the int32
// row of the same shape.
// The list of cases is checked against the registry: an op with a gpu-cuda kernel without a
// decode and a prefill row (or a row for an op without one) fails the run, dry run included.
// Links no libHalide and no CUDA library (the driver and cuBLASLt are loaded with dlopen).
//
// usage: gpu_bench [--dry-run] [--json FILE] [--iters N] [--time-limit S] [--without OP]
//   --dry-run: build and validate every case on the host, write the summary, touch no GPU.
//   --time-limit S: start no case after S seconds (those rows fail as not run); the JSON is
//     rewritten after every row, so a run killed from outside keeps the rows it finished.
//   --without OP: drop OP's cases (to check that the coverage check catches a missing op).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench/gpu/cublaslt.h"
#include "bench/gpu/cuda_driver.h"
#include "runtime/bind.h"
#include "runtime/error.h"
#include "runtime/gpu_memory.h"
#include "runtime/registry.h"

namespace npukit::bench {
namespace {

struct BenchCase {
  std::string op, shape;  // shape: "decode" or "prefill"
  DType dtype;
  std::map<std::string, int64_t> dims;
  std::map<std::string, std::string> params;
  int32_t int_base = 0;  // int32 inputs (positions) are int_base + i
  // Optional float32 inputs to pass (int8_gemm's w_scale), each filled with positive
  // values from the given one up to twice it.
  std::map<std::string, double> with = {};
};

// The shapes of a Llama-class 8B layer: hidden 4096, 32 query heads and 8 kv heads of 128;
// decode attends over a 4096-position cache, prefill is 2048 tokens (512 for attention and
// the activation-side ops: per-token quantization, residual add + RMSNorm, SiLU-and-multiply
// at Llama-2-7B's FFN width 11008).
std::vector<BenchCase> cases() {
  std::vector<BenchCase> out;
  const int64_t S = 4096;
  for (DType t : {DType::float16, DType::float32}) {
    out.push_back({"rms_norm", "decode", t, {{"rows", 1}, {"hidden", 4096}}, {}});
    out.push_back({"rms_norm", "prefill", t, {{"rows", 2048}, {"hidden", 4096}}, {}});
    out.push_back({"add_rms_norm", "decode", t, {{"rows", 1}, {"hidden", 4096}}, {}});
    out.push_back({"add_rms_norm", "prefill", t, {{"rows", 512}, {"hidden", 4096}}, {}});
    out.push_back({"silu_mul", "decode", t, {{"tokens", 1}, {"halves", 2}, {"ffn", 11008}}, {}});
    out.push_back({"silu_mul", "prefill", t, {{"tokens", 512}, {"halves", 2}, {"ffn", 11008}}, {}});
    out.push_back({"per_token_quant", "decode", t, {{"T", 1}, {"K", 4096}}, {}});
    out.push_back({"per_token_quant", "prefill", t, {{"T", 512}, {"K", 4096}}, {}});
    out.push_back({"rope", "decode", t, {{"tokens", 1}, {"heads", 32}, {"head_dim", 128}}, {}});
    out.push_back({"rope", "prefill", t, {{"tokens", 2048}, {"heads", 32}, {"head_dim", 128}}, {}});
    const std::map<std::string, int64_t> cache = {{"Hq", 32}, {"Hkv", 8}, {"S_max", S}, {"Dh", 128}};
    auto with = [&](std::map<std::string, int64_t> d, int64_t T) { d["T"] = T; return d; };
    out.push_back({"attention", "decode", t, with(cache, 1), {}, int32_t(S - 1)});
    out.push_back({"attention", "prefill", t, with(cache, 512), {}, int32_t(S - 512)});
    const std::map<std::string, int64_t> layer = {{"D", 4096}, {"QKV", 6144}, {"HqDh", 4096},
                                                  {"Hkv", 8}, {"S_max", S}, {"Dh", 128}};
    out.push_back({"qkv_attention", "decode", t, with(layer, 1), {{"pos", std::to_string(S - 1)}}});
    out.push_back({"qkv_attention", "prefill", t, with(layer, 512), {{"pos", std::to_string(S - 512)}}});
  }
  // int8_gemm: int32 output (against cuBLASLt) at M = 1, 128 and 2048; each epilogue the op
  // has (fp32/fp16 dequantized with per-channel w_scale, int8 requantized in gemmlowp fixed
  // point and in ONNX float rounding) at M = 1 and 128. w_scale 1e-4..2e-4 with a_scale =
  // out_scale = 1 keeps the requantized outputs mostly inside int8 and the fixed-point shift
  // in range.
  auto gemm = [](int64_t m) { return std::map<std::string, int64_t>{{"M", m}, {"K", 4096}, {"N", 4096}}; };
  out.push_back({"int8_gemm", "decode", DType::int8, gemm(1), {}});
  out.push_back({"int8_gemm", "prefill", DType::int8, gemm(128), {}});
  out.push_back({"int8_gemm", "prefill", DType::int8, gemm(2048), {}});
  const std::vector<std::map<std::string, std::string>> epilogues = {
      {{"out", "float32"}}, {{"out", "float16"}}, {{"out", "int8"}, {"rounding", "fixed_point"}},
      {{"out", "int8"}, {"rounding", "float"}}};
  for (int64_t m : {1, 128}) {
    for (const auto& params : epilogues) {
      out.push_back({"int8_gemm", m == 1 ? "decode" : "prefill", DType::int8, gemm(m), params, 0, {{"w_scale", 1e-4}}});
    }
  }
  // int4 weights in groups of 32, fp16 activations and scales (an AWQ/GPTQ-style layer).
  const std::map<std::string, int64_t> int4 = {{"K", 4096}, {"N", 4096}, {"K_bytes", 2048}, {"groups", 128}};
  auto rows = [&](std::map<std::string, int64_t> d, int64_t m) { d["M"] = m; return d; };
  out.push_back({"int4_gemm", "decode", DType::float16, rows(int4, 1), {{"group", "32"}}});
  out.push_back({"int4_gemm", "prefill", DType::float16, rows(int4, 2048), {{"group", "32"}}});
  return out;
}

// What the cases miss against the registry: every op with a gpu-cuda kernel needs a decode
// and a prefill row, and no row may name an op without one. Empty when complete.
std::vector<std::string> coverage_errors(const std::vector<BenchCase>& list) {
  std::vector<std::string> errors;
  for (const OpSpec* op : all_ops()) {
    const bool gpu = find_kernel(*op, "gpu-cuda") != nullptr;
    for (const char* shape : {"decode", "prefill"}) {
      const bool has = std::any_of(list.begin(), list.end(),
                                   [&](const BenchCase& c) { return c.op == op->name && c.shape == shape; });
      if (gpu && !has) {
        errors.push_back(op->name + " has a gpu-cuda kernel but no " + shape + " row in bench/gpu/gpu_bench.cpp");
      }
      if (!gpu && has) errors.push_back(op->name + " has a " + shape + " row but no gpu-cuda kernel");
    }
  }
  return errors;
}

// One case's tensors, host copies and (on a GPU, for ops that take them) device copies.
struct Tensors {
  TensorMap views;
  std::vector<std::vector<uint8_t>> host;
  std::map<std::string, const void*> host_of;  // each tensor's host copy
  std::vector<void*> device;
  double bytes = 0;  // read + written, what a perfect kernel moves
  CudaDriver* cuda = nullptr;
  Tensors() = default;
  Tensors(const Tensors&) = delete;
  Tensors& operator=(const Tensors&) = delete;
  Tensors(Tensors&&) = default;
  ~Tensors() {
    for (void* d : device) cuda->free(d);
  }
  // The same tensors in host memory: the call then copies them to the device and back.
  TensorMap host_views() const {
    TensorMap m = views;
    for (auto& [name, v] : m) {
      v.data = const_cast<void*>(host_of.at(name));
      v.memory = TensorView::Memory::host;
    }
    return m;
  }
};

std::vector<int64_t> shape_of(const TensorSpec& s, const std::map<std::string, int64_t>& dims) {
  std::vector<int64_t> shape;
  for (const std::string& d : s.dims) shape.push_back(dims.at(d));
  return shape;
}

// Deterministic, finite, in-range inputs: small floats; integers (positions) from int_base.
void fill_positive(std::vector<uint8_t>& b, double base) {
  float* f = reinterpret_cast<float*>(b.data());
  for (size_t i = 0; i < b.size() / sizeof(float); ++i) f[i] = static_cast<float>(base * (1.0 + double(i % 8) / 8.0));
}

void fill(std::vector<uint8_t>& b, DType t, int32_t int_base) {
  const size_t n = b.size() / dtype_size(t);
  for (size_t i = 0; i < n; ++i) {
    const double v = static_cast<double>(static_cast<int64_t>(i * 2654435761u % 2001) - 1000) / 1000.0;
    switch (t) {
      case DType::float32: reinterpret_cast<float*>(b.data())[i] = static_cast<float>(v); break;
      case DType::float16: reinterpret_cast<uint16_t*>(b.data())[i] = v < 0 ? 0xb800 : 0x3800; break;  // ±0.5
      case DType::int32: reinterpret_cast<int32_t*>(b.data())[i] = int_base + static_cast<int32_t>(i % 1024); break;
      case DType::int8: reinterpret_cast<int8_t*>(b.data())[i] = static_cast<int8_t>(i * 7 % 255 - 127); break;
      default: std::memset(b.data() + i * dtype_size(t), 0, dtype_size(t));
    }
  }
}

Tensors make_tensors(const OpSpec& op, const BenchCase& c, CudaDriver* cuda) {
  Tensors t;
  t.cuda = cuda;
  // host_data tensors (positions) stay on the host, as a framework that knows them keeps
  // them: from device memory each call would copy them back and wait for the device.
  auto add = [&](const std::string& name, DType dtype, std::vector<int64_t> shape, bool input, bool host_data) {
    TensorView v{nullptr, dtype, std::move(shape), {}};
    auto& h = t.host.emplace_back(static_cast<size_t>(v.numel()) * dtype_size(dtype));
    if (auto w = c.with.find(name); w != c.with.end()) {
      fill_positive(h, w->second);
    } else if (input) {
      fill(h, dtype, c.int_base);
    }
    v.data = h.data();
    t.host_of[name] = h.data();
    if (cuda && op.cuda_tensors && !host_data) {
      void* d = cuda->alloc(h.size());
      cuda->upload(d, h.data(), h.size());
      t.device.push_back(d);
      v.data = d;
      v.memory = TensorView::Memory::cuda;
    }
    t.views[name] = v;
  };
  TensorMap inputs;
  for (const TensorSpec& s : op.tensors) {
    if (!s.read() || (s.optional && !c.with.count(s.name))) continue;
    const DType dtype = std::find(s.dtypes.begin(), s.dtypes.end(), c.dtype) != s.dtypes.end() ? c.dtype : s.dtypes.at(0);
    std::vector<int64_t> shape = shape_of(s, c.dims);
    add(s.name, dtype, shape, true, s.host_data);
    inputs[s.name] = TensorView{t.host.back().data(), dtype, shape, {}};
    t.bytes += static_cast<double>(t.host.back().size()) * (s.written() ? 2 : 1);
  }
  for (const auto& [name, info] : infer_outputs(op, inputs, c.params)) {
    if (info.in_place) continue;
    add(name, info.dtype, info.shape, false, false);
    t.bytes += static_cast<double>(t.host.back().size());
  }
  return t;
}

// Device-to-device copy bandwidth, GB/s of read + write bytes, best of 5 rounds.
double copy_bandwidth(CudaDriver& cuda) {
  const size_t bytes = size_t(256) << 20;
  void* a = cuda.alloc(bytes);
  void* b = cuda.alloc(bytes);
  cuda.copy(b, a, bytes);
  double best = 0;
  for (int round = 0; round < 5; ++round) {
    const double ms = cuda.time_ms(10, [&] { cuda.copy(b, a, bytes); });
    best = std::max(best, 2.0 * bytes * 10 / (ms * 1e-3) / 1e9);
  }
  cuda.free(a);
  cuda.free(b);
  return best;
}

// The packed forms of the op's constants (OpSpec::constants), as a prepared op holds them,
// with device copies made at the first run on a GPU; for the ops timed on device memory
// (the others' rows include every copy anyway). A tensor the op declines to pack
// (qkv_attention's float weights) goes to each run, as a prepared op's caller passes it.
PackedConstants pack_constants(const OpSpec& op, const Tensors& t, bool gpu) {
  PackedConstants packed;
  if (!op.cuda_tensors) return packed;
  for (const auto& [name, packer] : op.constants) {
    auto it = t.views.find(name);
    if (it == t.views.end()) continue;
    TensorView host = it->second;
    host.data = const_cast<void*>(t.host_of.at(name));
    host.memory = TensorView::Memory::host;
    PackedConstant p;
    try {
      p = packer(host);
    } catch (const Error& e) {
      if (e.code() != Errc::invalid_argument) throw;
      continue;
    }
    if (gpu) p.gpu = std::make_shared<GpuConstantCopies>("gpu-cuda");
    packed[name] = std::move(p);
  }
  return packed;
}

// Microseconds per call of `fn`: the median over kBatches batches of `per_batch` calls
// each (null-stream events around a batch: what the device and the host spend on it).
constexpr int kBatches = 5;
template <class Fn>
double median_us(CudaDriver& cuda, int per_batch, Fn&& fn) {
  std::vector<double> us;
  for (int b = 0; b < kBatches; ++b) us.push_back(cuda.time_ms(per_batch, fn) * 1e3 / per_batch);
  std::sort(us.begin(), us.end());
  return us[us.size() / 2];
}

// The bytes a call on host tensors copies that the same call on device tensors does not:
// each tensor passed in device memory (not host_data, not held as a prepared op's
// constant) crosses once if read or written, twice if both (inout).
double host_copy_bytes(const OpSpec& op, const Tensors& t, const PackedConstants& packed) {
  if (!op.cuda_tensors) return 0;
  double bytes = 0;
  for (const TensorSpec& s : op.tensors) {
    auto it = t.views.find(s.name);
    if (it == t.views.end() || s.host_data || packed.count(s.name)) continue;
    const double size = static_cast<double>(it->second.numel()) * dtype_size(it->second.dtype);
    bytes += size * (s.role == TensorSpec::Role::inout ? 2 : 1);
  }
  return bytes;
}

// cuBLASLt on device copies of the case's a and w: its time per call, and whether its y
// equals npukit's (`y`, already computed by the timed runs).
void time_cublaslt(CudaDriver& cuda, CublasLt& lt, const BenchCase& c, const Tensors& t, int iters, nlohmann::json& row) {
  const TensorView& y = t.views.at("y");
  const int64_t m = c.dims.at("M"), n = c.dims.at("N"), k = c.dims.at("K");
  const size_t a_bytes = size_t(m * k), w_bytes = size_t(n * k), y_bytes = size_t(m * n) * sizeof(int32_t);
  std::vector<int32_t> ours(size_t(m * n));
  if (y.memory == TensorView::Memory::cuda) {
    cuda.download(ours.data(), y.data, y_bytes);
  } else {
    std::memcpy(ours.data(), y.data, y_bytes);
  }
  void* da = cuda.alloc(a_bytes);
  void* dw = cuda.alloc(w_bytes);
  void* dy = cuda.alloc(y_bytes);
  cuda.upload(da, t.host_of.at("a"), a_bytes);
  cuda.upload(dw, t.host_of.at("w"), w_bytes);
  for (int i = 0; i < 3; ++i) lt.int8_gemm(da, dw, dy, m, n, k);
  const double us = median_us(cuda, std::max(1, iters / kBatches), [&] { lt.int8_gemm(da, dw, dy, m, n, k); });
  std::vector<int32_t> theirs(size_t(m * n));
  cuda.download(theirs.data(), dy, y_bytes);
  for (void* p : {da, dw, dy}) cuda.free(p);
  row["cublaslt_us"] = us;
  row["vs_cublaslt"] = us / row["us"].get<double>();  // > 1: npukit is faster
  row["matches_cublaslt"] = theirs == ours;
}

bool int32_out(const BenchCase& c) {
  auto it = c.params.find("out");
  return it == c.params.end() || it->second == "int32";
}

// One case: bound (validated) on device and on host tensors; on a GPU, timed both ways.
void run_case(const BenchCase& c, CudaDriver* cuda, CublasLt* cublaslt, const nlohmann::json& summary, int iters,
              nlohmann::json& row) {
  const OpSpec& op = find_op(c.op);
  Tensors t = make_tensors(op, c, cuda);
  Call call = bind_call(op, "gpu-cuda", t.views, c.params);
  const PackedConstants packed = pack_constants(op, t, cuda != nullptr);
  call.packed = &packed;
  // The same call on host tensors: the kernel copies them to the device and back.
  const TensorMap host_views = t.host_views();
  Call host_call = bind_call(op, "gpu-cuda", host_views, c.params);
  host_call.packed = &packed;
  row["bytes"] = t.bytes;
  row["host_copy_bytes"] = host_copy_bytes(op, t, packed);
  if (!cuda) return;
  // Host-tensor calls move their tensors over PCIe each time: fewer of them.
  const int per_batch = op.cuda_tensors ? std::max(1, iters / kBatches) : 1;
  for (int i = 0; i < 3; ++i) run_call(call);
  const double us = median_us(*cuda, per_batch, [&] { run_call(call); });
  row["us"] = us;
  row["GBps"] = t.bytes / (us * 1e-6) / 1e9;
  row["vs_copy"] = row["GBps"].get<double>() / summary["copy_GBps"].get<double>();
  if (!op.cuda_tensors) {
    row["includes_host_copies"] = true;
  }
  if (c.op == "int8_gemm" && int32_out(c)) {
    if (!cublaslt) throw std::runtime_error("no cuBLASLt anchor: " + summary["cublaslt_error"].get<std::string>());
    time_cublaslt(*cuda, *cublaslt, c, t, iters, row);
    if (!row["matches_cublaslt"].get<bool>()) throw std::runtime_error("y differs from cuBLASLt's int32 result");
  }
  if (op.cuda_tensors) {
    run_call(host_call);  // warm-up: Halide's device allocations for the copies
    const double host_us = median_us(*cuda, 1, [&] { run_call(host_call); });
    row["host_us"] = host_us;
    row["host_copy_us"] = host_us - us;
    if (host_us > us) row["host_copy_GBps"] = row["host_copy_bytes"].get<double>() / ((host_us - us) * 1e-6) / 1e9;
  }
}

// An int8_gemm epilogue row's time over the int32 row of the same shape (listed before it
// in cases()), when both ran.
void add_epilogue_time(const BenchCase& c, const nlohmann::json& rows, nlohmann::json& row) {
  if (c.op != "int8_gemm" || int32_out(c) || !row.contains("us")) return;
  for (const auto& base : rows) {
    if (base["op"] == "int8_gemm" && base["dims"] == row["dims"] && !base["params"].contains("out") && base.contains("us")) {
      row["epilogue_us"] = row["us"].get<double>() - base["us"].get<double>();
    }
  }
}

int run(bool dry_run, const std::string& json_path, int iters, double time_limit, const std::string& without) {
  const auto start = std::chrono::steady_clock::now();
  std::unique_ptr<CudaDriver> cuda;
  std::unique_ptr<CublasLt> cublaslt;
  nlohmann::json summary;
  summary["dry_run"] = dry_run;
  summary["complete"] = false;
  auto write = [&] {
    if (json_path.empty()) return;
    // Whole or not at all: a run killed while writing leaves the last complete summary.
    const std::string tmp = json_path + ".tmp";
    std::ofstream(tmp) << summary.dump(2) << '\n';
    std::rename(tmp.c_str(), json_path.c_str());
  };
  std::vector<BenchCase> list = cases();
  list.erase(std::remove_if(list.begin(), list.end(), [&](const BenchCase& c) { return c.op == without; }), list.end());
  int failures = 0;
  const std::vector<std::string> missing = coverage_errors(list);
  summary["coverage_errors"] = missing;
  for (const std::string& m : missing) {
    std::cerr << "gpu_bench: " << m << '\n';
    ++failures;
  }
  write();
  if (!dry_run) {
    try {
      cuda = std::make_unique<CudaDriver>();
      summary["device"] = cuda->device_name();
      summary["copy_GBps"] = copy_bandwidth(*cuda);
    } catch (const std::exception& e) {
      summary["error"] = e.what();  // no device: no row can run
      write();
      throw;
    }
    try {
      cublaslt = std::make_unique<CublasLt>(*cuda);
      summary["cublaslt"] = cublaslt->version();
    } catch (const std::exception& e) {
      summary["cublaslt_error"] = e.what();  // the int32 int8_gemm rows then fail: no anchor
    }
  }
  summary["cases"] = nlohmann::json::array();
  for (const BenchCase& c : list) {
    nlohmann::json row = {{"op", c.op}, {"shape", c.shape}, {"dtype", std::string(dtype_name(c.dtype))},
                          {"dims", c.dims}, {"params", c.params}};
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    try {
      row["device_tensors"] = find_op(c.op).cuda_tensors;
      if (time_limit > 0 && elapsed > time_limit) {
        throw std::runtime_error("not run: the bench's time limit (" + std::to_string(int(time_limit)) + " s) was reached");
      }
      run_case(c, cuda.get(), cublaslt.get(), summary, iters, row);
    } catch (const std::exception& e) {
      row["error"] = e.what();
      ++failures;
    }
    add_epilogue_time(c, summary["cases"], row);
    std::cout << row.dump() << '\n';
    summary["cases"].push_back(row);
    summary["failures"] = failures;
    write();
  }
  summary["failures"] = failures;
  summary["complete"] = true;
  summary["seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  write();
  return failures ? 1 : 0;
}

}  // namespace
}  // namespace npukit::bench

int main(int argc, char** argv) {
  bool dry_run = false;
  std::string json;
  int iters = 50;
  double time_limit = 0;
  std::string without;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--dry-run") {
      dry_run = true;
    } else if (a == "--json" && i + 1 < argc) {
      json = argv[++i];
    } else if (a == "--iters" && i + 1 < argc) {
      iters = std::atoi(argv[++i]);
    } else if (a == "--time-limit" && i + 1 < argc) {
      time_limit = std::atof(argv[++i]);
    } else if (a == "--without" && i + 1 < argc) {
      without = argv[++i];
    } else {
      std::cerr << "gpu_bench: unknown argument '" << a
                << "' (usage: gpu_bench [--dry-run] [--json FILE] [--iters N] [--time-limit S] [--without OP])\n";
      return 2;
    }
  }
  if (iters < 1) {
    std::cerr << "gpu_bench: --iters " << iters << ": must be at least 1\n";
    return 2;
  }
  try {
    return npukit::bench::run(dry_run, json, iters, time_limit, without);
  } catch (const std::exception& e) {
    std::cerr << "gpu_bench: " << e.what() << '\n';
    return 1;
  }
}
