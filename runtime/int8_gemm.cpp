#include "runtime/int8_gemm.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "kernels/int8_gemm_acc_decode.h"
#include "kernels/int8_gemm_acc_decode_gpu.h"
#include "kernels/int8_gemm_acc_prefill.h"
#include "kernels/int8_gemm_acc_prefill_direct.h"
#include "kernels/int8_gemm_acc_prefill_gpu.h"
#include "runtime/error.h"
#include "runtime/gpu_memory.h"
#include "runtime/halide_call.h"
#include "runtime/halide_threads.h"
#include "runtime/kernel_call.h"
#include "schedules/cpu/int8_gemm_tiles.h"

namespace npukit {
namespace {

// One row streams the weights (decode); two or more share each weight block from
// registers in tiles of kRowTile rows (prefill), or from AMX tiles of kAmxRowTile rows.
constexpr int64_t kRowTile = schedules::cpu::kVnniTileRows, kAmxRowTile = schedules::cpu::kAmxTileRows;
constexpr int64_t kAmxTaskChannels = schedules::cpu::kAmxTaskChannels;

// The AMX tier's tile holds 16 rows and costs the same for 1 to 16 of them; the VNNI
// prefill kernel costs one pass per 8-row tile. Measured on the Xeon here (one thread,
// N = K = 4096, CPU time): at M = 1 the VNNI decode kernel took 0.7x AMX's time, at
// M = 2 to 8 VNNI 0.9-1.05x, from M = 9 (a second VNNI row tile) AMX 0.65-0.7x VNNI's.
constexpr int64_t kAmxMinRows = kRowTile + 1;
bool amx_pays_off(int64_t m) { return m >= kAmxMinRows; }

// The tier of the accumulation for `m` rows: the one forced or picked, except that where
// that is avx512_amx and AMX does not pay off for m, the avx512_vnni kernels run (every CPU
// with AMX has AVX512-VNNI). A forced avx512_amx that this CPU cannot run is refused by
// the AMX kernel's own table, with the features it lacks.
std::string_view accumulation_tier(int64_t m, std::string_view forced) {
  const bool amx = forced == "avx512_amx" || (forced.empty() && cpu_runs_tier("avx512_amx"));
  if (!amx) return forced;
  pick_cpu_variant(kernels::int8_gemm_acc_prefill, forced);
  return amx_pays_off(m) ? "avx512_amx" : "avx512_vnni";
}

}  // namespace

int64_t int8_k_limit(int32_t zp) {
  const int64_t hi = 127 - int64_t(zp), lo = -128 - int64_t(zp);  // range of a − zp
  const int64_t pmax = std::max(hi * 127, lo * -128);
  const int64_t nmin = std::min(hi * -128, lo * 127);
  int64_t limit = INT64_MAX;
  if (pmax > 0) limit = std::min(limit, int64_t(INT32_MAX) / pmax);
  if (nmin < 0) limit = std::min(limit, (int64_t(1) << 31) / -nmin);
  return limit;
}

Int8WeightViews int8_weight_views(const layouts::PackedInt8Weights& w) {
  return {TensorView{const_cast<int8_t*>(w.bytes()), DType::int8, {w.n_pad / 16, w.k_pad / 4, 16, 4}, {}},
          TensorView{const_cast<int32_t*>(w.row_sums.data()), DType::int32, {w.n_pad}, {}}};
}

Int8WeightViews int8_gpu_weights(const Call& call, std::string_view name, const layouts::PackedInt8Weights& w) {
  const Int8WeightViews host = int8_weight_views(w);
  if (call.packed_constant<layouts::PackedInt8Weights>(name) != &w) return host;
  return {gpu_resident(call, name, host.packed), gpu_resident(call, name, host.sums)};
}

void int8_gemm_accumulate_gpu(const TensorView& a, const Int8WeightViews& w, int32_t a_zero_point,
                              const TensorView& acc, const std::string& family) {
  Call where;  // only the target matters to call_kernel
  where.target = family;
  const int32_t threads = 1;  // the GPU kernels ignore it (ops/int8_gemm.h)
  if (a.shape.at(0) > 1) {
    call_kernel(kernels::int8_gemm_acc_prefill_gpu, where, In{a}, In{w.packed}, In{w.sums}, a_zero_point, threads,
                Out{acc});
  } else {
    call_kernel(kernels::int8_gemm_acc_decode_gpu, where, In{a}, In{w.packed}, In{w.sums}, a_zero_point, threads,
                Out{acc});
  }
}

void int8_gemm_accumulate(const TensorView& a, const layouts::PackedInt8Weights& w, int32_t a_zero_point,
                          const TensorView& acc, std::string_view forced_tier, std::string_view family,
                          ScratchFrame* scratch) {
  const int64_t m = a.shape.at(0), k = a.shape.at(1);
  if (k != w.k) fail(Errc::internal, "int8_gemm: a has K = {}, packed weights {}", k, w.k);
  if (is_gpu_family(family)) {
    int8_gemm_accumulate_gpu(a, int8_weight_views(w), a_zero_point, acc, std::string(family));
    return;
  }
  const std::string_view tier = accumulation_tier(m, forced_tier);
  const bool amx = tier == "avx512_amx", prefill = m > 1;
  // Without a zero point, with whole AMX channel blocks and a row tile at least, the AMX
  // tiles go straight into acc: no buffer and no pass over it. Its last row tile is shifted
  // inwards, so its rows need no padding.
  const bool direct =
      amx && a_zero_point == 0 && m >= kAmxRowTile && acc.shape.at(1) % kAmxTaskChannels == 0;
  // The kernels read all of k_pad (whole AMX K steps) and, for prefill, whole row tiles;
  // the weights' padding is zero and extra rows are never stored, so the padding only needs
  // to be readable.
  const int64_t row_tile = amx ? kAmxRowTile : kRowTile;
  const int64_t m_pad = prefill && !direct ? (m + row_tile - 1) / row_tile * row_tile : m;
  std::vector<int8_t> heap;
  TensorView a_view = a;
  if (w.k_pad != k || m_pad != m) {
    const size_t bytes = static_cast<size_t>(m_pad * w.k_pad);
    int8_t* padded = scratch ? scratch->take<int8_t>(bytes) : (heap.resize(bytes), heap.data());
    std::memset(padded, 0, bytes);
    for (int64_t r = 0; r < m; ++r) {
      std::memcpy(padded + r * w.k_pad, static_cast<const int8_t*>(a.data) + r * k, static_cast<size_t>(k));
    }
    a_view = TensorView{padded, DType::int8, {m_pad, w.k_pad}, {}};
  }
  const Int8WeightViews wv = int8_weight_views(w);
  Call where;  // only the target and tier matter to call_kernel
  where.target = "cpu";
  where.tier = std::string(tier);
  const int32_t threads = halide_thread_count();
  if (direct) {
    call_kernel(kernels::int8_gemm_acc_prefill_direct, where, In{a_view}, In{wv.packed}, In{wv.sums}, a_zero_point,
                threads, Out{acc});
  } else if (prefill) {
    call_kernel(kernels::int8_gemm_acc_prefill, where, In{a_view}, In{wv.packed}, In{wv.sums}, a_zero_point, threads,
                Out{acc});
  } else {
    call_kernel(kernels::int8_gemm_acc_decode, where, In{a_view}, In{wv.packed}, In{wv.sums}, a_zero_point, threads,
                Out{acc});
  }
}

std::optional<QuantizedMultiplier> quantize_multiplier(double real) {
  if (!std::isfinite(real) || real <= 0) return std::nullopt;
  int shift = 0;
  const double q = std::frexp(real, &shift);  // real = q · 2^shift, q in [0.5, 1)
  int64_t fixed = static_cast<int64_t>(std::round(q * double(int64_t(1) << 31)));
  if (fixed == (int64_t(1) << 31)) {
    fixed /= 2;
    ++shift;
  }
  if (shift < -31 || shift > 30) return std::nullopt;
  return QuantizedMultiplier{static_cast<int32_t>(fixed), shift};
}

}  // namespace npukit
