// The GPU bench that bench/gpu/run_device.sh runs on a machine with an NVIDIA GPU: each op
// with GPU kernels at its decode and prefill shapes on gpu-cuda, as GB/s of the bytes it
// must move and as a ratio to the device-to-device copy bandwidth (cuMemcpyDtoD, read +
// write bytes) measured in the same run. Ops that take CUDA tensors run on device memory
// (no transfers in the timing), their constants (int8_gemm's w) as a prepared op holds them:
// packed once and kept on the device; the others on host tensors, marked as including the
// copies.
// int8_gemm rows also time cuBLASLt's int8 GEMM on device copies of the same a and w, and
// check that its int32 result equals npukit's bit for bit.
// Links no libHalide and no CUDA library (the driver and cuBLASLt are loaded with dlopen).
//
// usage: gpu_bench [--dry-run] [--json FILE] [--iters N]
//   --dry-run: build and validate every case on the host, write the summary, touch no GPU.
#include <algorithm>
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
};

// The shapes of a Llama-class 8B layer: hidden 4096, 32 query heads and 8 kv heads of 128;
// decode attends over a 4096-position cache, prefill is 2048 tokens (512 for attention).
std::vector<BenchCase> cases() {
  std::vector<BenchCase> out;
  const int64_t S = 4096;
  for (DType t : {DType::float16, DType::float32}) {
    out.push_back({"rms_norm", "decode", t, {{"rows", 1}, {"hidden", 4096}}, {}});
    out.push_back({"rms_norm", "prefill", t, {{"rows", 2048}, {"hidden", 4096}}, {}});
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
  out.push_back({"int8_gemm", "decode", DType::int8, {{"M", 1}, {"K", 4096}, {"N", 4096}}, {}});
  out.push_back({"int8_gemm", "prefill", DType::int8, {{"M", 2048}, {"K", 4096}, {"N", 4096}}, {}});
  // int4 weights in groups of 32, fp16 activations and scales (an AWQ/GPTQ-style layer).
  const std::map<std::string, int64_t> int4 = {{"K", 4096}, {"N", 4096}, {"K_bytes", 2048}, {"groups", 128}};
  auto rows = [&](std::map<std::string, int64_t> d, int64_t m) { d["M"] = m; return d; };
  out.push_back({"int4_gemm", "decode", DType::float16, rows(int4, 1), {{"group", "32"}}});
  out.push_back({"int4_gemm", "prefill", DType::float16, rows(int4, 2048), {{"group", "32"}}});
  return out;
}

// One case's tensors, host copies and (on a GPU, for ops that take them) device copies.
struct Tensors {
  TensorMap views;
  std::vector<std::vector<uint8_t>> host;
  std::map<std::string, const void*> host_of;  // each tensor's host copy
  std::vector<void*> device;
  double bytes = 0;  // read + written, what a perfect kernel moves
};

std::vector<int64_t> shape_of(const TensorSpec& s, const std::map<std::string, int64_t>& dims) {
  std::vector<int64_t> shape;
  for (const std::string& d : s.dims) shape.push_back(dims.at(d));
  return shape;
}

// Deterministic, finite, in-range inputs: small floats; integers (positions) from int_base.
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
  // host_data tensors (positions) stay on the host, as a framework that knows them keeps
  // them: from device memory each call would copy them back and wait for the device.
  auto add = [&](const std::string& name, DType dtype, std::vector<int64_t> shape, bool input, bool host_data) {
    TensorView v{nullptr, dtype, std::move(shape), {}};
    auto& h = t.host.emplace_back(static_cast<size_t>(v.numel()) * dtype_size(dtype));
    if (input) fill(h, dtype, c.int_base);
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
    if (!s.read() || s.optional) continue;
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
  const double ms = cuda.time_ms(iters, [&] { lt.int8_gemm(da, dw, dy, m, n, k); }) / iters;
  std::vector<int32_t> theirs(size_t(m * n));
  cuda.download(theirs.data(), dy, y_bytes);
  for (void* p : {da, dw, dy}) cuda.free(p);
  row["cublaslt_us"] = ms * 1e3;
  row["vs_cublaslt"] = ms * 1e3 / row["us"].get<double>();  // > 1: npukit is faster
  row["matches_cublaslt"] = theirs == ours;
}

int run(bool dry_run, const std::string& json_path, int iters) {
  std::unique_ptr<CudaDriver> cuda;
  std::unique_ptr<CublasLt> cublaslt;
  nlohmann::json summary;
  summary["dry_run"] = dry_run;
  if (!dry_run) {
    cuda = std::make_unique<CudaDriver>();
    summary["device"] = cuda->device_name();
    summary["copy_GBps"] = copy_bandwidth(*cuda);
    try {
      cublaslt = std::make_unique<CublasLt>(*cuda);
      summary["cublaslt"] = cublaslt->version();
    } catch (const std::exception& e) {
      summary["cublaslt_error"] = e.what();  // the int8_gemm rows then fail: no anchor
    }
  }
  nlohmann::json rows = nlohmann::json::array();
  int failures = 0;
  for (const BenchCase& c : cases()) {
    const OpSpec& op = find_op(c.op);
    nlohmann::json row = {{"op", c.op}, {"shape", c.shape}, {"dtype", std::string(dtype_name(c.dtype))},
                          {"dims", c.dims}, {"device_tensors", op.cuda_tensors}};
    try {
      Tensors t = make_tensors(op, c, cuda.get());
      Call call = bind_call(op, "gpu-cuda", t.views, c.params);
      const PackedConstants packed = pack_constants(op, t, cuda != nullptr);
      call.packed = &packed;
      row["bytes"] = t.bytes;
      if (cuda) {
        // Host-tensor calls move their tensors over PCIe each time: fewer of them.
        const int n = op.cuda_tensors ? iters : std::max(1, iters / 10);
        for (int i = 0; i < 3; ++i) run_call(call);
        const double ms = cuda->time_ms(n, [&] { run_call(call); }) / n;
        row["us"] = ms * 1e3;
        row["GBps"] = t.bytes / (ms * 1e-3) / 1e9;
        row["vs_copy"] = row["GBps"].get<double>() / summary["copy_GBps"].get<double>();
        if (!op.cuda_tensors) row["includes_host_copies"] = true;
        if (c.op == "int8_gemm") {
          if (!cublaslt) throw std::runtime_error("no cuBLASLt anchor: " + summary["cublaslt_error"].get<std::string>());
          time_cublaslt(*cuda, *cublaslt, c, t, iters, row);
          if (!row["matches_cublaslt"].get<bool>()) throw std::runtime_error("y differs from cuBLASLt's int32 result");
        }
      }
      for (void* d : t.device) cuda->free(d);
    } catch (const std::exception& e) {
      row["error"] = e.what();
      ++failures;
    }
    std::cout << row.dump() << '\n';
    rows.push_back(row);
  }
  summary["cases"] = rows;
  summary["failures"] = failures;
  if (!json_path.empty()) {
    std::ofstream(json_path) << summary.dump(2) << '\n';
  }
  return failures ? 1 : 0;
}

}  // namespace
}  // namespace npukit::bench

int main(int argc, char** argv) {
  bool dry_run = false;
  std::string json;
  int iters = 50;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--dry-run") {
      dry_run = true;
    } else if (a == "--json" && i + 1 < argc) {
      json = argv[++i];
    } else if (a == "--iters" && i + 1 < argc) {
      iters = std::atoi(argv[++i]);
    } else {
      std::cerr << "gpu_bench: unknown argument '" << a << "' (usage: gpu_bench [--dry-run] [--json FILE] [--iters N])\n";
      return 2;
    }
  }
  if (iters < 1) {
    std::cerr << "gpu_bench: --iters " << iters << ": must be at least 1\n";
    return 2;
  }
  try {
    return npukit::bench::run(dry_run, json, iters);
  } catch (const std::exception& e) {
    std::cerr << "gpu_bench: " << e.what() << '\n';
    return 1;
  }
}
