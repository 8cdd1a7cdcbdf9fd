#include "runtime/cpu_features.h"

#include <cpuid.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <iterator>

#include "runtime/text.h"

namespace npukit {
namespace {

uint64_t xgetbv0() {
  uint32_t eax, edx;
  __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
  return (uint64_t(edx) << 32) | eax;
}

CpuFeatures detect() {
  CpuFeatures f;
  unsigned a, b, c, d;
  if (!__get_cpuid(0, &a, &b, &c, &d)) return f;
  f.intel = b == 0x756e6547 && d == 0x49656e69 && c == 0x6c65746e;  // "Genu" "ineI" "ntel"
  if (!__get_cpuid(1, &a, &b, &c, &d)) return f;
  f.sse41 = c & (1u << 19);
  f.fma = c & (1u << 12);
  f.f16c = c & (1u << 29);
  const bool osxsave = c & (1u << 27);
  const bool avx_bit = c & (1u << 28);
  if (osxsave) {
    const uint64_t xcr0 = xgetbv0();
    f.os_ymm = (xcr0 & 0x6) == 0x6;     // SSE and AVX state
    f.os_zmm = (xcr0 & 0xe6) == 0xe6;   // plus opmask and both ZMM halves
    f.os_amx = (xcr0 & 0x60000) == 0x60000;  // XTILECFG and XTILEDATA
  }
  f.avx = avx_bit && f.os_ymm;
  f.fma = f.fma && f.os_ymm;
  f.f16c = f.f16c && f.os_ymm;
  if (__get_cpuid_max(0, nullptr) >= 7) {
    __cpuid_count(7, 0, a, b, c, d);
    f.avx2 = (b & (1u << 5)) && f.os_ymm;
    const bool z = f.os_zmm;
    f.avx512f = (b & (1u << 16)) && z;
    f.avx512dq = (b & (1u << 17)) && z;
    f.avx512ifma = (b & (1u << 21)) && z;
    f.avx512cd = (b & (1u << 28)) && z;
    f.avx512bw = (b & (1u << 30)) && z;
    f.avx512vl = (b & (1u << 31)) && z;
    f.avx512vbmi = (c & (1u << 1)) && z;
    f.avx512vnni = (c & (1u << 11)) && z;
    f.amx_tile = d & (1u << 24);
    f.amx_int8 = d & (1u << 25);
    __cpuid_count(7, 1, a, b, c, d);
    f.avxvnni = (a & (1u << 4)) && f.os_ymm;
    f.avx512bf16 = (a & (1u << 5)) && z;
  }
  return f;
}

bool has(const CpuFeatures& f, std::string_view name) {
  if (name == "sse41") return f.sse41;
  if (name == "avx") return f.avx;
  if (name == "f16c") return f.f16c;
  if (name == "fma") return f.fma;
  if (name == "avx2") return f.avx2;
  if (name == "avx512f") return f.avx512f;
  if (name == "avx512cd") return f.avx512cd;
  if (name == "avx512dq") return f.avx512dq;
  if (name == "avx512bw") return f.avx512bw;
  if (name == "avx512vl") return f.avx512vl;
  if (name == "avx512ifma") return f.avx512ifma;
  if (name == "avx512vbmi") return f.avx512vbmi;
  if (name == "avx512vnni") return f.avx512vnni;
  if (name == "avx512bf16") return f.avx512bf16;
  if (name == "avxvnni") return f.avxvnni;
  if (name == "amx_tile") return f.amx_tile;
  if (name == "amx_int8") return f.amx_int8;
  if (name == "amx_tile_data") return amx_tile_data_permitted(f);
  return false;
}

}  // namespace

const CpuFeatures& cpu_features() {
  static const CpuFeatures f = detect();
  return f;
}

bool amx_tile_data_permitted(const CpuFeatures& f) {
  // Linux (5.16+) hands out the 8 KiB tile state only on request; without it the first tile
  // instruction raises SIGILL. Asked at most once per process, and only by a caller that
  // wants AMX (a kernel table listing the AMX tier, a forced avx512_amx, or a report of the
  // tier int8_gemm dispatches to): the grant makes every signal frame of the process larger.
  constexpr long kArchReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
  static const bool granted = [] {
    const CpuFeatures& here = cpu_features();
    return here.os_amx && here.amx_tile && syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
  }();
  return f.os_amx && f.amx_tile && granted;
}

int tier_rank(std::string_view tier) {
  for (size_t i = 0; i < std::size(kCpuTiers); ++i) {
    if (tier == kCpuTiers[i]) return static_cast<int>(i);
  }
  return -1;
}

std::vector<std::string> tier_requirements(std::string_view tier) {
  // Each feature with the first tier that requires it, in kCpuTiers' order. Not avxvnni at
  // avx512_vnni: that tier's kernels must use the EVEX (zmm) vpdpbusd only.
  struct Requirement {
    std::string_view tier, feature;
  };
  static constexpr Requirement kRequirements[] = {
      {"sse41", "sse41"},
      {"avx2", "avx"}, {"avx2", "f16c"}, {"avx2", "fma"}, {"avx2", "avx2"},
      {"avx512", "avx512f"}, {"avx512", "avx512cd"}, {"avx512", "avx512dq"}, {"avx512", "avx512bw"},
      {"avx512", "avx512vl"},
      {"avx512_vnni", "avx512ifma"}, {"avx512_vnni", "avx512vbmi"}, {"avx512_vnni", "avx512vnni"},
      {"avx512_amx", "amx_tile"}, {"avx512_amx", "amx_int8"}, {"avx512_amx", "amx_tile_data"},
  };
  const int rank = tier_rank(tier);
  std::vector<std::string> r;
  for (const Requirement& q : kRequirements) {
    if (tier_rank(q.tier) <= rank) r.emplace_back(q.feature);
  }
  return r;
}

std::vector<std::string> missing_for_tier(const CpuFeatures& f, std::string_view tier) {
  std::vector<std::string> missing;
  for (const std::string& req : tier_requirements(tier)) {
    if (!has(f, req)) missing.push_back(req);
  }
  return missing;
}

bool cpu_runs_tier(std::string_view tier) {
  constexpr size_t kAmx = std::size(kCpuTiers) - 1;
  static_assert(kCpuTiers[kAmx] == "avx512_amx");
  static const auto runs = [] {
    std::array<bool, kAmx> r{};
    for (size_t i = 0; i < r.size(); ++i) r[i] = missing_for_tier(cpu_features(), kCpuTiers[i]).empty();
    return r;
  }();
  const int rank = tier_rank(tier);
  if (rank < 0) return false;
  if (size_t(rank) < kAmx) return runs[rank];
  // Apart from the others: answering asks Linux for the tile data, which only a caller that
  // may run an AMX kernel should do.
  static const bool amx = missing_for_tier(cpu_features(), tier).empty();
  return amx;
}

std::string tier_unavailable(std::string_view tier) {
  if (tier_rank(tier) < 0) {
    const std::string known = join_names(kCpuTiers, [](std::string_view t) { return t; });
    return "'" + std::string(tier) + "' is not a CPU tier (" + known + ")";
  }
  if (cpu_runs_tier(tier)) return "";
  return "tier '" + std::string(tier) + "' needs " + join_names(missing_for_tier(cpu_features(), tier)) +
         ", which this machine lacks";
}

std::string halide_cpu_target(const CpuFeatures& f) {
  std::string t = "x86-64-linux";
  if (!f.sse41) return t;
  t += "-sse41";
  if (!(f.avx && f.f16c && f.fma && f.avx2)) return t;
  t += "-avx-f16c-fma-avx2";
  if (!(f.avx512f && f.avx512cd && f.avx512dq && f.avx512bw && f.avx512vl)) return t;
  t += "-avx512-avx512_skylake";
  if (!(f.avx512ifma && f.avx512vbmi)) return t;
  t += "-avx512_cannonlake";
  // Halide 14's sapphirerapids lets LLVM use AVX-VNNI (VEX vpdpbusd on xmm/ymm): only
  // where the CPU has it. Zen 4 has AVX512-VNNI and BF16 but not AVX-VNNI.
  if (f.avx512vnni && f.avx512bf16 && f.avxvnni) t += "-avx512_sapphirerapids";
  return t;
}

std::string describe(const CpuFeatures& f) {
  std::string out;
  for (const char* name : {"sse41", "avx", "f16c", "fma", "avx2", "avx512f", "avx512cd", "avx512dq",
                           "avx512bw", "avx512vl", "avx512ifma", "avx512vbmi", "avx512vnni",
                           "avx512bf16", "avxvnni", "amx_tile", "amx_int8"}) {
    if (has(f, name)) out += (out.empty() ? "" : " ") + std::string(name);
  }
  return out;
}

std::string cpu_model() {
  unsigned a, b, c, d;
  if (!__get_cpuid(0, &a, &b, &c, &d)) return "unknown CPU (no cpuid)";
  char vendor[13] = {};
  std::memcpy(vendor, &b, 4);
  std::memcpy(vendor + 4, &d, 4);
  std::memcpy(vendor + 8, &c, 4);
  __get_cpuid(1, &a, &b, &c, &d);
  // Family and model as Linux's /proc/cpuinfo shows them: the extended family counts where
  // the base family is 15, the extended model from family 6 on.
  const unsigned base_family = (a >> 8) & 0xf, base_model = (a >> 4) & 0xf;
  const unsigned family = base_family == 0xf ? base_family + ((a >> 20) & 0xff) : base_family;
  const unsigned model = family >= 6 ? base_model | (((a >> 16) & 0xf) << 4) : base_model;
  std::string brand;
  if (__get_cpuid_max(0x80000000, nullptr) >= 0x80000004) {
    char text[49] = {};
    for (unsigned leaf = 0; leaf < 3; ++leaf) {
      __get_cpuid(0x80000002 + leaf, &a, &b, &c, &d);
      const unsigned regs[4] = {a, b, c, d};
      std::memcpy(text + 16 * leaf, regs, 16);
    }
    brand = text;
    const size_t first = brand.find_first_not_of(' '), last = brand.find_last_not_of(' ');
    brand = first == std::string::npos ? "" : brand.substr(first, last - first + 1);
  }
  if (brand.empty()) brand = "unnamed CPU";
  return brand + " (" + vendor + " family " + std::to_string(family) + " model " + std::to_string(model) + ")";
}

}  // namespace npukit
