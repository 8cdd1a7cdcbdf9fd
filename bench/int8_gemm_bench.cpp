// INT8 GEMM against oneDNN (u8s8s32 and s8s8s32 matmul) in the same process, the same
// threads and the same cold-weight rotation: GOPS, weight GB/s and the ratio to oneDNN.
// Weights are packed once per copy (as a framework does at load time) and rotated over
// more than 256 MiB so that each call streams them from DRAM. At N = 4096 the kit runs
// three ways: as dispatched, forced to avx512_vnni and forced to avx512_amx (which keeps
// VNNI up to 8 rows: `amx_pays_off` in runtime/int8_gemm.cpp, so M = 4 and 8 run the VNNI
// prefill kernel there), each against oneDNN in the same run; and N = 4096 at K = 11008
// (the down projection), as dispatched.
#include <benchmark/benchmark.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "bench/copy_anchor.h"
#include "bench/machine_context.h"
#include "bench/timed_calls.h"
#include "dnnl.hpp"
#include "layouts/vnni_int8.h"
#include "runtime/cpu_features.h"
#include "runtime/int8_gemm.h"
#include "runtime/halide_threads.h"

namespace npukit::bench {
namespace {

// NPUKIT_BENCH_SMOKE (set by the ctest smoke run) keeps two copies: enough to run every
// path, far from cold.
bool smoke() { return std::getenv("NPUKIT_BENCH_SMOKE") != nullptr; }

size_t copies_for(size_t bytes) {
  return smoke() ? 2 : std::max<size_t>(2, (kColdBytes + bytes - 1) / bytes);
}

// oneDNN matmul src[M, K] x weights[K, N] (weights in oneDNN's own packed format) → s32.
struct OneDnnGemm {
  dnnl::engine eng{dnnl::engine::kind::cpu, 0};
  dnnl::stream strm{eng};
  dnnl::matmul prim;
  dnnl::memory src, dst;
  std::vector<dnnl::memory> weights;

  OneDnnGemm(int64_t m, int64_t n, int64_t k, bool u8_src, size_t copies) {
    using dt = dnnl::memory::data_type;
    using tag = dnnl::memory::format_tag;
    const dnnl::memory::desc src_md({m, k}, u8_src ? dt::u8 : dt::s8, tag::ab);
    const dnnl::memory::desc any_w({k, n}, dt::s8, tag::any);
    const dnnl::memory::desc dst_md({m, n}, dt::s32, tag::ab);
    const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(src_md, any_w, dst_md), eng);
    prim = dnnl::matmul(pd);
    src = dnnl::memory(src_md, eng);
    dst = dnnl::memory(dst_md, eng);
    std::memset(src.get_data_handle(), 3, m * k);
    const dnnl::memory::desc plain_w({k, n}, dt::s8, tag::ab);
    dnnl::memory plain(plain_w, eng);
    std::mt19937 rng(1);
    auto* p = static_cast<int8_t*>(plain.get_data_handle());
    for (int64_t i = 0; i < k * n; ++i) p[i] = static_cast<int8_t>(rng() & 0xff);
    for (size_t c = 0; c < copies; ++c) {
      weights.emplace_back(pd.weights_desc(), eng);
      dnnl::reorder(plain, weights.back()).execute(strm, plain, weights.back());
    }
    strm.wait();
  }
  void run(size_t copy) {
    prim.execute(strm, {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, weights[copy % weights.size()]}, {DNNL_ARG_DST, dst}});
    strm.wait();
  }
  // Whether this matmul is exact where int16 intermediates would saturate: src at its most
  // negative product with weights of −128 (u8: 255 · −128 summed over K). Without VNNI,
  // oneDNN's u8s8 kernel sums pairs of products with vpmaddubsw, which saturates at int16:
  // the anchor is then faster than an exact kernel can be. Clobbers src and weights copy 0.
  bool exact_at_extremes(int64_t m, int64_t n, int64_t k, bool u8_src) {
    std::memset(src.get_data_handle(), u8_src ? 255 : 0x80, m * k);
    const dnnl::memory::desc plain_w({k, n}, dnnl::memory::data_type::s8, dnnl::memory::format_tag::ab);
    dnnl::memory plain(plain_w, eng);
    std::memset(plain.get_data_handle(), 0x80, k * n);
    dnnl::reorder(plain, weights[0]).execute(strm, plain, weights[0]);
    run(0);
    const int64_t want = (u8_src ? 255 : -128) * int64_t(-128) * k;
    return static_cast<const int32_t*>(dst.get_data_handle())[0] == want;
  }
};

template <class Fn>
double median_seconds(Fn fn, int reps) {
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    fn(static_cast<size_t>(r + 1));
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return median_of(t);
}

// Tensors as frameworks hand them over, 64-byte aligned (PyTorch's CPU allocator; oneDNN
// aligns its own memory here). With malloc's 16 bytes each 64-byte row of an AMX tile
// stored into acc straddled two lines: M = 512, N = 4096, K = 256 on the Xeon with AMX,
// 1.43 -> 1.08 ms on one thread, 1.5 -> 0.96 ms on two.
template <class T>
struct Aligned {
  explicit Aligned(size_t count, T fill = T())
      : data(static_cast<T*>(std::aligned_alloc(64, (count * sizeof(T) + 63) / 64 * 64)), &std::free) {
    std::fill(data.get(), data.get() + count, fill);
  }
  std::unique_ptr<T, decltype(&std::free)> data;
};

// The tier argument: 0 as dispatched (or the tier --npukit_target forces), then forced tiers.
const char* const kTiers[] = {"", "avx512_vnni", "avx512_amx"};

void BM_int8_gemm(benchmark::State& state) {
  const int64_t m = state.range(0), n = state.range(1), k = state.range(2);
  const char* tier = kTiers[state.range(3)];
  if (state.range(3) > 0 && *forced_tier()) {
    state.SkipWithError("--npukit_target forces every call's tier: see tier:0");
    return;
  }
  if (state.range(3) == 0) tier = forced_tier();
  if (*tier && !cpu_runs_tier(tier)) {
    state.SkipWithError(("not runnable on this CPU: " + tier_unavailable(tier)).c_str());
    return;
  }
  state.SetLabel(*tier ? tier : "dispatched");
  const size_t copies = copies_for(size_t(n) * k);
  std::mt19937 rng(2);
  std::vector<int8_t> w(n * k);
  for (auto& v : w) v = static_cast<int8_t>(rng() & 0xff);
  std::vector<layouts::PackedInt8Weights> packed;
  for (size_t c = 0; c < copies; ++c) packed.push_back(layouts::pack_int8_weights(w.data(), n, k));
  Aligned<int8_t> a(m * k, 3);
  Aligned<int32_t> acc(m * n);
  const TensorView a_view{a.data.get(), DType::int8, {m, k}, {}}, acc_view{acc.data.get(), DType::int32, {m, n}, {}};
  auto npukit_call = [&](size_t c) { int8_gemm_accumulate(a_view, packed[c % copies], 0, acc_view, tier); };

  OneDnnGemm u8s8(m, n, k, true, copies), s8s8(m, n, k, false, copies);
  const int reps = smoke() ? 1 : m >= 128 ? 5 : 21;
  npukit_call(0);
  u8s8.run(0);
  s8s8.run(0);
  const double t_u8s8 = median_seconds([&](size_t c) { u8s8.run(c); }, reps);
  const double t_s8s8 = median_seconds([&](size_t c) { s8s8.run(c); }, reps);

  size_t c = 0;
  const double t = time_runs(state, [&] { ++c; }, [&] { npukit_call(c); }, [](double) {});
  const double ops = 2.0 * m * n * k;
  state.counters["threads"] = halide_thread_count();
  state.counters["GOPS"] = ops / t / 1e9;
  state.counters["weight_GB/s"] = double(n) * k / t / 1e9;
  state.counters["onednn_u8s8_GOPS"] = ops / t_u8s8 / 1e9;
  state.counters["vs_onednn_u8s8"] = t_u8s8 / t;
  state.counters["vs_onednn_s8s8"] = t_s8s8 / t;
  state.counters["onednn_u8s8_exact"] = u8s8.exact_at_extremes(m, n, k, true);
}

void shapes(benchmark::internal::Benchmark* b) {
  for (int64_t n : {4096, 11008}) {
    for (int64_t m : {1, 4, 8, 16, 128, 512}) {
      for (int64_t tier = 0; tier < (n == 4096 ? 3 : 1); ++tier) b->Args({m, n, 4096, tier});
    }
  }
  // The down projection's K (an FFN of 11008): the A panel of a row block no longer fits L2.
  for (int64_t m : {1, 16, 128, 512}) b->Args({m, 4096, 11008, 0});
  b->ArgNames({"M", "N", "K", "tier"})->UseManualTime()->Unit(benchmark::kMicrosecond);
}

BENCHMARK(BM_int8_gemm)->Apply(shapes);

}  // namespace
}  // namespace npukit::bench

int main(int argc, char** argv) {
  // oneDNN's OpenMP pool and Halide's pool get the same number of threads. (OpenMP has
  // read OMP_NUM_THREADS before main, so set it through the API.)
  omp_set_num_threads(npukit::halide_thread_count());
  return npukit::bench::run_benchmarks(argc, argv);
}
