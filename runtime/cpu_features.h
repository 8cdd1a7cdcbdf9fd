// The CPU's real instruction-set features, read with cpuid and xgetbv. npukit chooses its
// Halide CPU targets from these, never from Halide's `host`: Halide 14 calls AMD Zen 4
// `avx512_sapphirerapids` and then emits VEX vpdpbusd, which Zen 4 cannot execute.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace npukit {

struct CpuFeatures {
  bool sse41 = false, avx = false, f16c = false, fma = false, avx2 = false;
  bool avx512f = false, avx512cd = false, avx512dq = false, avx512bw = false, avx512vl = false;
  bool avx512ifma = false, avx512vbmi = false, avx512vnni = false, avx512bf16 = false;
  bool avxvnni = false;  // the VEX (ymm/xmm) encoding of vpdpbusd: Intel since Alder Lake, AMD Zen 5
  bool amx_tile = false, amx_int8 = false;  // CPUID.(7,0):EDX bits 24 and 25
  bool os_ymm = false, os_zmm = false;  // the OS saves the AVX / AVX-512 register state
  bool os_amx = false;                  // the OS enables the AMX tile state (XCR0 bits 17, 18)
  bool intel = false;  // cpuid's vendor is GenuineIntel: where a schedule choice differs by vendor
};

// Detected once per process.
const CpuFeatures& cpu_features();

// An Intel CPU with AMX (Sapphire Rapids class, the Xeon of docs/performance.md): the one
// CPU whose decode kernels measured faster on the hardware prefetchers alone and with
// several streams at once; each such choice (runtime/ops/split_attention.h,
// runtime/ops/weight_streams.h) is made for it alone, as no other CPU was measured.
inline bool intel_amx_class(const CpuFeatures& f) { return f.intel && f.amx_tile; }

// Whether Linux lets this process use the AMX tile data (XFEATURE_XTILEDATA): asked once per
// process, on the first call, with arch_prctl(ARCH_REQ_XCOMP_PERM); false without os_amx.
// The dispatcher asks before it picks an AMX kernel, so before the first tile instruction.
bool amx_tile_data_permitted(const CpuFeatures& f);

// The CPU tiers (see cmake/NpukitKernels.cmake), lowest first. Each tier's kernels may use
// every feature of the tiers before it and its own (tier_requirements), so a CPU that runs
// a tier runs every tier before it.
inline constexpr std::string_view kCpuTiers[] = {"sse41", "avx2", "avx512", "avx512_vnni", "avx512_amx"};

// The index of `tier` in kCpuTiers, or -1 for a name that is not a tier.
int tier_rank(std::string_view tier);

// The features a CPU tier's kernels may use; empty for an unknown tier. avx512_amx also
// requires "amx_tile_data": the OS's tile state and this process's permission to use it.
std::vector<std::string> tier_requirements(std::string_view tier);

// The requirements of `tier` that `f` lacks; empty when the tier runs here.
std::vector<std::string> missing_for_tier(const CpuFeatures& f, std::string_view tier);

// Whether this machine (cpu_features()) runs `tier`: missing_for_tier's answer, cached, so
// that picking a kernel's tier allocates nothing on each call.
bool cpu_runs_tier(std::string_view tier);

// Why this machine cannot run `tier`, in one line ("tier 'avx512_amx' needs amx_tile,
// amx_int8, amx_tile_data, which this machine lacks", or that it is not a tier); empty when
// it can. (amx_tile_data is the OS's tile state and this process's permission to use it.)
std::string tier_unavailable(std::string_view tier);

// The best Halide target string for JIT compilation on this CPU, e.g.
// "x86-64-linux-sse41-avx-f16c-fma-avx2-avx512-avx512_skylake-avx512_cannonlake".
std::string halide_cpu_target(const CpuFeatures& f);

// Names of the features present, for reports (e.g. "avx2 avx512f ... avx512vnni").
std::string describe(const CpuFeatures& f);

// This CPU for reports: cpuid's brand string and its family and model numbers (a VM may
// show a bare "AMD EPYC", which the numbers tell apart: family 25 model 1 is Zen 3), e.g.
// "AMD EPYC (AuthenticAMD family 25 model 1)".
std::string cpu_model();

}  // namespace npukit
