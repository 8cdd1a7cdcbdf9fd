// The shipped kernels hold no instruction this CPU lacks. Each AOT library of a tier that
// the dispatcher may pick here is disassembled, every instruction is mapped to the CPU
// feature it needs (by encoding, not by name alone: VEX vpdpbusd needs AVX-VNNI, EVEX
// vpdpbusd needs AVX512-VNNI), and the set is checked against cpuid.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "runtime/cpu_features.h"

namespace npukit {
namespace {

struct Library {
  std::string name, path, tier;
};

std::vector<Library> shipped_libraries() {
  std::ifstream in(NPUKIT_KERNEL_LIST);
  std::vector<Library> libs;
  for (std::string name, path, tier; in >> name >> path >> tier;) libs.push_back({name, path, tier});
  return libs;
}

bool has_feature(const CpuFeatures& f, const std::string& name) {
  static const std::map<std::string, bool CpuFeatures::*> members = {
      {"sse41", &CpuFeatures::sse41}, {"avx", &CpuFeatures::avx}, {"f16c", &CpuFeatures::f16c},
      {"fma", &CpuFeatures::fma}, {"avx2", &CpuFeatures::avx2}, {"avx512f", &CpuFeatures::avx512f},
      {"avx512bw", &CpuFeatures::avx512bw}, {"avx512dq", &CpuFeatures::avx512dq}, {"avx512cd", &CpuFeatures::avx512cd},
      {"avx512vl", &CpuFeatures::avx512vl}, {"avx512ifma", &CpuFeatures::avx512ifma},
      {"avx512vbmi", &CpuFeatures::avx512vbmi}, {"avx512vnni", &CpuFeatures::avx512vnni},
      {"avx512bf16", &CpuFeatures::avx512bf16}, {"avxvnni", &CpuFeatures::avxvnni},
      {"amx_tile", &CpuFeatures::amx_tile}, {"amx_int8", &CpuFeatures::amx_int8}};
  return f.*members.at(name);
}

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

// The features one disassembled instruction needs. `bytes` are its encoding in hex pairs.
std::set<std::string> needs(const std::string& bytes, const std::string& mnemonic, const std::string& operands) {
  std::set<std::string> out;
  std::istringstream b(bytes);
  std::string first;
  b >> first;
  while ((first == "66" || first == "f2" || first == "f3" || first == "2e" || first == "3e") && (b >> first)) {
  }
  const bool evex = first == "62";
  const bool vex = first == "c4" || first == "c5";
  std::string op = mnemonic;
  if (starts_with(op, "{vex} ")) op = op.substr(6);
  const bool dot = op == "vpdpbusd" || op == "vpdpbusds" || op == "vpdpwssd" || op == "vpdpwssds";
  if (dot) out.insert(evex ? "avx512vnni" : "avxvnni");
  if (evex) out.insert("avx512f");
  if (evex && operands.find("%zmm") == std::string::npos && !dot) out.insert("avx512vl");
  if (vex) out.insert("avx");
  if (vex && operands.find("%ymm") != std::string::npos && starts_with(op, "vp")) out.insert("avx2");
  if (starts_with(op, "vfmadd") || starts_with(op, "vfmsub") || starts_with(op, "vfnmadd") || starts_with(op, "vfnmsub")) {
    out.insert("fma");
  }
  if (starts_with(op, "vcvtph2ps") || starts_with(op, "vcvtps2ph")) out.insert(evex ? "avx512f" : "f16c");
  if (op == "vdpbf16ps" || starts_with(op, "vcvtne2ps2bf16") || starts_with(op, "vcvtneps2bf16")) out.insert("avx512bf16");
  if (op == "vpermb" || op == "vpermi2b" || op == "vpermt2b" || op == "vpmultishiftqb") out.insert("avx512vbmi");
  if (starts_with(op, "vpmadd52")) out.insert("avx512ifma");
  // AMX: every tile instruction needs AMX-TILE; the int8 tile dot products AMX-INT8, the
  // bf16 one AMX-BF16 (which no tier declares).
  if (op == "ldtilecfg" || op == "sttilecfg" || op == "tilerelease" || starts_with(op, "tileload") ||
      op == "tilestored" || op == "tilezero") {
    out.insert("amx_tile");
  }
  if (op == "tdpbssd" || op == "tdpbsud" || op == "tdpbusd" || op == "tdpbuud") out.insert({"amx_tile", "amx_int8"});
  if (op == "tdpbf16ps") out.insert({"amx_tile", "amx_bf16"});
  return out;
}

// Every instruction of `lib` as the set of features each needs; feature → an example.
std::map<std::string, std::string> features_used(const Library& lib, int& instructions) {
  std::map<std::string, std::string> used;
  const std::string cmd = "objdump -d --no-addresses " + lib.path;
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return used;
  char buf[1024];
  instructions = 0;
  // objdump line: "\t<hex bytes>\t<mnemonic> <operands>"; a long encoding continues on
  // a line of bytes alone.
  while (fgets(buf, sizeof buf, p)) {
    std::string line(buf);
    while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
    if (line.empty() || line[0] != '\t') continue;
    const size_t tab = line.find('\t', 1);
    if (tab == std::string::npos || tab + 1 >= line.size()) continue;
    const std::string bytes = line.substr(1, tab - 1);
    std::string rest = line.substr(tab + 1);
    std::string prefix;
    if (starts_with(rest, "{vex} ")) {
      prefix = "{vex} ";
      rest = rest.substr(6);
    }
    const size_t space = rest.find_first_of(" \t");
    const std::string mnemonic = prefix + rest.substr(0, space);
    const std::string operands = space == std::string::npos ? "" : rest.substr(space);
    ++instructions;
    for (const std::string& need : needs(bytes, mnemonic, operands)) used.emplace(need, line);
  }
  pclose(p);
  return used;
}

TEST(KernelAsm, EveryKernelStaysWithinItsTier) {
  // Machine-independent: a tier's declared features are what dispatch checks, so a kernel
  // that uses more (say VEX vpdpbusd in the avx512_vnni tier) would crash some CPU that
  // the dispatcher sends it to, even if this one runs it.
  const auto libs = shipped_libraries();
  ASSERT_FALSE(libs.empty()) << "no kernel list at " << NPUKIT_KERNEL_LIST;
  for (const Library& lib : libs) {
    const auto allowed = tier_requirements(lib.tier);
    ASSERT_FALSE(allowed.empty()) << lib.name << ": unknown tier " << lib.tier;
    int instructions = 0;
    for (const auto& [feature, example] : features_used(lib, instructions)) {
      if (std::find(allowed.begin(), allowed.end(), feature) == allowed.end()) {
        ADD_FAILURE() << lib.name << " (tier " << lib.tier << ") uses " << feature << ", which its tier does not declare: " << example;
      }
    }
    EXPECT_GT(instructions, 100) << lib.name << ": objdump printed almost nothing";
  }
}

TEST(KernelAsm, EveryDispatchableKernelRunsOnThisCpu) {
  const CpuFeatures& f = cpu_features();
  int checked = 0;
  for (const Library& lib : shipped_libraries()) {
    if (!missing_for_tier(f, lib.tier).empty()) continue;  // never dispatched here
    int instructions = 0;
    for (const auto& [feature, example] : features_used(lib, instructions)) {
      if (!has_feature(f, feature)) {
        ADD_FAILURE() << lib.name << " (" << lib.tier << ") uses " << feature << ", which this CPU lacks: " << example;
      }
    }
    ++checked;
  }
  EXPECT_GT(checked, 0);
}

// How many lines of `lib`'s disassembly match the grep pattern.
int count_matching(const Library& lib, const std::string& pattern) {
  const std::string cmd = "objdump -d --no-addresses " + lib.path + " | grep -c '" + pattern + "'";
  FILE* p = popen(cmd.c_str(), "r");
  int count = -1;
  if (p == nullptr || fscanf(p, "%d", &count) != 1) count = -1;
  if (p != nullptr) pclose(p);
  return count;
}

TEST(KernelAsm, Int8GemmUsesZmmVpdpbusd) {
  // The x86 fast path of INT8 GEMM is u8 x s8 vpdpbusd on zmm registers (EVEX).
  int libraries = 0;
  for (const Library& lib : shipped_libraries()) {
    if (lib.tier != "avx512_vnni" || lib.name.find("int8_gemm_acc") == std::string::npos) continue;
    ++libraries;
    EXPECT_GE(count_matching(lib, "vpdpbusd.*%zmm"), 2) << lib.name;
  }
  EXPECT_EQ(libraries, 2);  // decode and prefill
}

TEST(KernelAsm, Int4GemmVnniTierUsesZmmVpdpbusd) {
  // The int8-activation INT4 GEMM's avx512_vnni tier sums each group with vpdpbusd of the
  // unpacked nibbles (u8) against the activations (s8), on zmm registers (EVEX).
  int libraries = 0;
  for (const Library& lib : shipped_libraries()) {
    if (lib.tier != "avx512_vnni" || lib.name.find("int4_gemm") == std::string::npos) continue;
    ++libraries;
    EXPECT_NE(lib.name.find("int4_gemm_i8"), std::string::npos) << lib.name << ": only int8 activations have the tier";
    EXPECT_GE(count_matching(lib, "vpdpbusd.*%zmm"), 2) << lib.name;  // the low and the high nibbles
  }
  EXPECT_EQ(libraries, 2);  // float32 and float16 outputs
}


TEST(KernelAsm, Int8GemmAmxTierUsesTileDotProducts) {
  // The avx512_amx tier's accumulation is AMX tile matmuls (s8 x s8 tdpbssd, or u8 x s8
  // tdpbusd): without them the tier would be the VNNI kernel under another name.
  int libraries = 0;
  for (const Library& lib : shipped_libraries()) {
    if (lib.tier != "avx512_amx") continue;
    EXPECT_NE(lib.name.find("int8_gemm_acc"), std::string::npos) << lib.name << ": only INT8 GEMM has an AMX tier";
    ++libraries;
    EXPECT_GE(count_matching(lib, "tdpbssd\\|tdpbusd"), 1) << lib.name;
    EXPECT_GE(count_matching(lib, "ldtilecfg"), 1) << lib.name;
  }
  // prefill, general and direct (decode stays on avx512_vnni: runtime/int8_gemm.cpp)
  EXPECT_EQ(libraries, 2);
}

TEST(KernelAsm, DecodeAttentionPrefetchesEveryLineIntoItsLevel) {
  // ops/prefetch.h replaces Halide 14's prefetch (prefetchnta, one line in two) by
  // linking its own _halide_prefetch; that rests on the link keeping ours, so check it,
  // and the level ops/attention.h picks: L2 where k and v rows are both prefetched (the
  // avx512 tier), L1 where only k rows are.
  int libraries = 0;
  for (const Library& lib : shipped_libraries()) {
    if (lib.name.find("attention_decode") == std::string::npos) continue;
    ++libraries;
    const bool into_l2 = lib.name.find("_avx512") != std::string::npos;
    EXPECT_GT(count_matching(lib, into_l2 ? "prefetcht1" : "prefetcht0"), 0) << lib.name;
    EXPECT_EQ(count_matching(lib, into_l2 ? "prefetcht0" : "prefetcht1"), 0) << lib.name;
    EXPECT_EQ(count_matching(lib, "prefetchnta"), 0) << lib.name;
  }
  EXPECT_EQ(libraries, 18);  // 3 dtype variants × masked / unmasked × 3 tiers
}

TEST(KernelAsm, TheClassifierKnowsVexFromEvexDotProducts) {
  // vpdpbusd %ymm2,%ymm1,%ymm0 in both encodings.
  EXPECT_EQ(needs("c4 e2 75 50 c2", "{vex} vpdpbusd", "%ymm2,%ymm1,%ymm0"), (std::set<std::string>{"avx", "avx2", "avxvnni"}));
  EXPECT_EQ(needs("62 f2 75 48 50 c2", "vpdpbusd", "%zmm2,%zmm1,%zmm0"), (std::set<std::string>{"avx512f", "avx512vnni"}));
  EXPECT_EQ(needs("c4 e2 79 13 c0", "vcvtph2ps", "%xmm0,%xmm0"), (std::set<std::string>{"avx", "f16c"}));
  // AMX instructions are VEX-encoded but need AMX, not AVX2.
  EXPECT_EQ(needs("c4 e2 5b 5e c3", "tdpbssd", "%tmm4,%tmm3,%tmm0"), (std::set<std::string>{"avx", "amx_tile", "amx_int8"}));
  EXPECT_EQ(needs("c4 a2 7b 4b 24 3f", "tileloadd", "(%rdi,%r15,1),%tmm4"), (std::set<std::string>{"avx", "amx_tile"}));
}

}  // namespace
}  // namespace npukit
