// CPU target selection: the kit's own cpuid reading, the Halide target string it derives,
// and the tiers it may dispatch to.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "runtime/cpu_features.h"

namespace npukit {
namespace {

// The first value of a /proc/cpuinfo field ("model name", "cpu family", ...), or "".
std::string proc_cpuinfo_field(const std::string& name) {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    const size_t colon = line.find(':');
    if (colon == std::string::npos || line.rfind(name, 0) != 0) continue;
    std::string key = line.substr(0, colon);
    key.erase(key.find_last_not_of(" \t") + 1);
    if (key != name) continue;
    const size_t value = line.find_first_not_of(' ', colon + 1);
    return value == std::string::npos ? "" : line.substr(value);
  }
  return "";
}

std::set<std::string> proc_cpuinfo_flags() {
  std::istringstream ss(proc_cpuinfo_field("flags"));
  std::set<std::string> flags;
  for (std::string f; ss >> f;) flags.insert(f);
  return flags;
}

CpuFeatures zen4() {
  CpuFeatures f;
  f.sse41 = f.avx = f.f16c = f.fma = f.avx2 = true;
  f.avx512f = f.avx512cd = f.avx512dq = f.avx512bw = f.avx512vl = true;
  f.avx512ifma = f.avx512vbmi = f.avx512vnni = f.avx512bf16 = true;
  f.os_ymm = f.os_zmm = true;
  f.avxvnni = false;  // the fact Halide 14 gets wrong
  return f;
}

TEST(CpuFeatures, AgreesWithTheKernelsView) {
  const auto flags = proc_cpuinfo_flags();
  ASSERT_FALSE(flags.empty());
  const CpuFeatures& f = cpu_features();
  EXPECT_EQ(f.sse41, flags.count("sse4_1") == 1);
  EXPECT_EQ(f.avx2, flags.count("avx2") == 1);
  EXPECT_EQ(f.fma, flags.count("fma") == 1);
  EXPECT_EQ(f.f16c, flags.count("f16c") == 1);
  EXPECT_EQ(f.avx512f, flags.count("avx512f") == 1);
  EXPECT_EQ(f.avx512bw, flags.count("avx512bw") == 1);
  EXPECT_EQ(f.avx512vnni, flags.count("avx512_vnni") == 1);
  EXPECT_EQ(f.avx512bf16, flags.count("avx512_bf16") == 1);
  EXPECT_EQ(f.avxvnni, flags.count("avx_vnni") == 1);
  EXPECT_EQ(f.amx_tile, flags.count("amx_tile") == 1);
  EXPECT_EQ(f.amx_int8, flags.count("amx_int8") == 1);
}

// What every bench prints as `cpu:`: the kernel's model name, family and model numbers
// (decoded from cpuid as Linux decodes them: Zen 3 is family 25 model 1, extended fields
// included).
TEST(CpuFeatures, TheModelIsWhatLinuxReports) {
  const std::string model = cpu_model();
  const std::string family = proc_cpuinfo_field("cpu family"), number = proc_cpuinfo_field("model");
  const std::string name = proc_cpuinfo_field("model name");
  ASSERT_FALSE(family.empty());
  ASSERT_FALSE(number.empty());
  EXPECT_NE(model.find(" family " + family + " model " + number + ")"), std::string::npos) << model;
  if (!name.empty()) {
    EXPECT_EQ(model.rfind(name + " (", 0), 0u) << model << " against " << name;
  }
}

TEST(CpuFeatures, TheAmxTierNeedsTilesInt8AndTheTileData) {
  // Zen 4 and Zen 5 have AVX512-VNNI but no AMX: the forced tier names all three.
  EXPECT_EQ(missing_for_tier(zen4(), "avx512_amx"), (std::vector<std::string>{"amx_tile", "amx_int8", "amx_tile_data"}));
  CpuFeatures f = zen4();
  f.amx_tile = f.amx_int8 = true;  // the CPU has AMX but the OS does not enable its state
  EXPECT_EQ(missing_for_tier(f, "avx512_amx"), (std::vector<std::string>{"amx_tile_data"}));
  EXPECT_FALSE(amx_tile_data_permitted(f));
}

TEST(CpuFeatures, LinuxGrantsTheTileDataWhereTheCpuHasAmx) {
  const CpuFeatures& f = cpu_features();
  // Asking twice is one request (the answer is cached) and gives the same answer.
  EXPECT_EQ(amx_tile_data_permitted(f), amx_tile_data_permitted(f));
  EXPECT_EQ(cpu_runs_tier("avx512_amx"), missing_for_tier(f, "avx512_amx").empty());
  if (f.amx_tile && f.amx_int8 && f.os_amx) {
    EXPECT_TRUE(cpu_runs_tier("avx512_amx"));
  }
  if (!f.amx_tile) {
    EXPECT_FALSE(cpu_runs_tier("avx512_amx"));
  }
}

TEST(CpuFeatures, Zen4NeverGetsSapphireRapids) {
  const std::string t = halide_cpu_target(zen4());
  EXPECT_EQ(t, "x86-64-linux-sse41-avx-f16c-fma-avx2-avx512-avx512_skylake-avx512_cannonlake");
  EXPECT_EQ(t.find("sapphirerapids"), std::string::npos);
}

TEST(CpuFeatures, AvxVnniUnlocksSapphireRapids) {
  CpuFeatures f = zen4();
  f.avxvnni = true;
  EXPECT_NE(halide_cpu_target(f).find("avx512_sapphirerapids"), std::string::npos);
}

TEST(CpuFeatures, OlderCpusGetSmallerTargets) {
  CpuFeatures f = zen4();
  f.os_zmm = false;
  f.avx512f = f.avx512cd = f.avx512dq = f.avx512bw = f.avx512vl = false;
  EXPECT_EQ(halide_cpu_target(f), "x86-64-linux-sse41-avx-f16c-fma-avx2");
  EXPECT_EQ(missing_for_tier(f, "avx512"),
            (std::vector<std::string>{"avx512f", "avx512cd", "avx512dq", "avx512bw", "avx512vl"}));
  EXPECT_TRUE(missing_for_tier(f, "avx2").empty());
  EXPECT_EQ(halide_cpu_target(CpuFeatures{}), "x86-64-linux");
}

TEST(CpuFeatures, ThisMachineRunsTheTiersItsFlagsAllow) {
  // Every x86-64 machine here has AVX2 (Zen 3 and later, Sapphire Rapids); AVX-512 tiers run
  // exactly where the kernel's flags list the features, and where they do not, that is a
  // tier not runnable here, reported, never passed.
  const auto flags = proc_cpuinfo_flags();
  ASSERT_FALSE(flags.empty());
  for (const char* tier : {"avx2", "sse41"}) EXPECT_TRUE(missing_for_tier(cpu_features(), tier).empty()) << tier;
  bool has_avx512 = true;
  for (const char* flag : {"avx512f", "avx512cd", "avx512dq", "avx512bw", "avx512vl"}) has_avx512 &= flags.count(flag) == 1;
  EXPECT_EQ(missing_for_tier(cpu_features(), "avx512").empty(), has_avx512);
  EXPECT_TRUE(tier_requirements("no-such-tier").empty());
  if (!has_avx512) GTEST_SKIP() << "not runnable on this CPU (no AVX-512): tier avx512, 1 check (its refusal checked instead)";
}

}  // namespace
}  // namespace npukit
