// The shipped kernels hold no instruction this CPU lacks. Each AOT library of a tier that
// the dispatcher may pick here is disassembled, every instruction is mapped to the CPU
// feature it needs (by encoding, not by name alone: VEX vpdpbusd needs AVX-VNNI, EVEX
// vpdpbusd needs AVX512-VNNI), and the set is checked against cpuid.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <regex>
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
  for (std::string name, path; in >> name >> path;) {
    libs.push_back({name, path, name.substr(name.rfind('_') + 1)});
  }
  return libs;
}

bool has_feature(const CpuFeatures& f, const std::string& name) {
  static const std::map<std::string, bool CpuFeatures::*> members = {
      {"sse41", &CpuFeatures::sse41}, {"avx", &CpuFeatures::avx}, {"f16c", &CpuFeatures::f16c},
      {"fma", &CpuFeatures::fma}, {"avx2", &CpuFeatures::avx2}, {"avx512f", &CpuFeatures::avx512f},
      {"avx512bw", &CpuFeatures::avx512bw}, {"avx512dq", &CpuFeatures::avx512dq},
      {"avx512vl", &CpuFeatures::avx512vl}, {"avx512ifma", &CpuFeatures::avx512ifma},
      {"avx512vbmi", &CpuFeatures::avx512vbmi}, {"avx512vnni", &CpuFeatures::avx512vnni},
      {"avx512bf16", &CpuFeatures::avx512bf16}, {"avxvnni", &CpuFeatures::avxvnni}};
  return f.*members.at(name);
}

// The features one disassembled instruction needs. `bytes` are its encoding in hex pairs.
std::set<std::string> needs(const std::string& bytes, const std::string& mnemonic, const std::string& operands) {
  std::set<std::string> out;
  std::istringstream b(bytes);
  std::string first;
  b >> first;
  while (first == "66" || first == "f2" || first == "f3" || first == "2e" || first == "3e") b >> first;
  const bool evex = first == "62";
  const bool vex = first == "c4" || first == "c5";
  const bool dot = std::regex_search(mnemonic, std::regex("^(\\{vex\\} )?vpdp(busd|busds|wssd|wssds)$"));
  if (dot) out.insert(evex ? "avx512vnni" : "avxvnni");
  if (evex) out.insert("avx512f");
  if (evex && operands.find("%zmm") == std::string::npos && !dot) out.insert("avx512vl");
  if (vex) out.insert("avx");
  if (vex && operands.find("%ymm") != std::string::npos &&
      std::regex_search(mnemonic, std::regex("^vp"))) out.insert("avx2");
  if (std::regex_search(mnemonic, std::regex("^vf(n)?m(add|sub)"))) out.insert("fma");
  if (std::regex_search(mnemonic, std::regex("^vcvt(ph2ps|ps2ph)"))) out.insert(evex ? "avx512f" : "f16c");
  if (std::regex_search(mnemonic, std::regex("^(vdpbf16ps|vcvtne2?ps2bf16)"))) out.insert("avx512bf16");
  if (std::regex_search(mnemonic, std::regex("^(vpermb|vpermi2b|vpermt2b|vpmultishiftqb)"))) out.insert("avx512vbmi");
  if (std::regex_search(mnemonic, std::regex("^vpmadd52"))) out.insert("avx512ifma");
  return out;
}

TEST(KernelAsm, EveryDispatchableKernelRunsOnThisCpu) {
  const CpuFeatures& f = cpu_features();
  const auto libs = shipped_libraries();
  ASSERT_FALSE(libs.empty()) << "no kernel list at " << NPUKIT_KERNEL_LIST;
  int checked = 0;
  for (const Library& lib : libs) {
    if (!missing_for_tier(f, lib.tier).empty()) continue;  // never dispatched here
    const std::string cmd = "objdump -d --no-addresses " + lib.path;
    FILE* p = popen(cmd.c_str(), "r");
    ASSERT_NE(p, nullptr);
    std::map<std::string, std::string> offending;  // feature → example instruction
    int instructions = 0;
    char buf[1024];
    // objdump line: "\t<hex bytes>\t<mnemonic> <operands>"
    static const std::regex line_re("^\\s*((?:[0-9a-f]{2} )+)\\s*(\\{vex\\} )?([a-z0-9]+)\\s*(.*)$");
    while (fgets(buf, sizeof buf, p)) {
      std::smatch m;
      std::string line(buf);
      if (!std::regex_search(line, m, line_re)) continue;
      ++instructions;
      const std::string mnemonic = m[2].str() + m[3].str();
      for (const std::string& need : needs(m[1], mnemonic, m[4])) {
        if (!has_feature(f, need)) offending.emplace(need, line);
      }
    }
    ASSERT_EQ(pclose(p), 0) << cmd;
    EXPECT_GT(instructions, 100) << lib.name << ": objdump printed almost nothing";
    for (const auto& [feature, example] : offending) {
      ADD_FAILURE() << lib.name << " (" << lib.tier << ") uses " << feature
                    << ", which this CPU lacks: " << example;
    }
    ++checked;
  }
  EXPECT_GT(checked, 0);
}

TEST(KernelAsm, TheClassifierKnowsVexFromEvexDotProducts) {
  // vpdpbusd %ymm2,%ymm1,%ymm0 in both encodings.
  EXPECT_EQ(needs("c4 e2 75 50 c2", "{vex} vpdpbusd", "%ymm2,%ymm1,%ymm0"), (std::set<std::string>{"avx", "avxvnni"}));
  EXPECT_EQ(needs("62 f2 75 48 50 c2", "vpdpbusd", "%zmm2,%zmm1,%zmm0"), (std::set<std::string>{"avx512f", "avx512vnni"}));
  EXPECT_EQ(needs("c4 e2 79 13 c0", "vcvtph2ps", "%xmm0,%xmm0"), (std::set<std::string>{"avx", "f16c"}));
}

}  // namespace
}  // namespace npukit
