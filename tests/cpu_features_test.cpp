// CPU target selection: the kit's own cpuid reading, the Halide target string it derives,
// and the tiers it may dispatch to.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>
#include <string>

#include "runtime/cpu_features.h"
#include "runtime/cpu_variant.h"
#include "runtime/text.h"

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
  EXPECT_EQ(f.intel, proc_cpuinfo_field("vendor_id") == "GenuineIntel") << proc_cpuinfo_field("vendor_id");
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

TEST(CpuFeatures, EachTierNeedsWhatTheTierBeforeItNeeds) {
  // Nested requirements are what lets a forced tier stand for "a CPU with only these
  // features": every tier at or below it runs there.
  std::vector<std::string> before;
  for (size_t i = 0; i < std::size(kCpuTiers); ++i) {
    EXPECT_EQ(tier_rank(kCpuTiers[i]), int(i));
    const std::vector<std::string> r = tier_requirements(kCpuTiers[i]);
    ASSERT_GT(r.size(), before.size()) << kCpuTiers[i];
    EXPECT_TRUE(std::equal(before.begin(), before.end(), r.begin())) << kCpuTiers[i];
    before = r;
  }
  EXPECT_EQ(tier_rank("avx9000"), -1);
}

TEST(CpuFeatures, AnUnavailableTierIsOneLineNamingWhatIsMissing) {
  EXPECT_EQ(tier_unavailable("avx9000"), "'avx9000' is not a CPU tier (sse41, avx2, avx512, avx512_vnni, avx512_amx)");
  EXPECT_EQ(tier_unavailable("sse41"), "");
  if (!cpu_runs_tier("avx512_amx")) {
    const std::string why = tier_unavailable("avx512_amx");
    EXPECT_EQ(why.rfind("tier 'avx512_amx' needs ", 0), 0u) << why;
    // All three on a CPU without AMX; the tile data alone where the OS withholds it.
    const std::string missing = join_names(missing_for_tier(cpu_features(), "avx512_amx"));
    EXPECT_NE(why.find(missing + ", which this machine lacks"), std::string::npos) << why;
  }
}

// A table of three tiers with a gap (no plain avx512, as int8_gemm's accumulation), whose
// functions return their tier's index.
int run_vnni() { return 0; }
int run_avx2() { return 1; }
int run_sse41() { return 2; }
const CpuKernel<int (*)(), 3> kGapped{
    "gapped", {{"avx512_vnni", "", &run_vnni}, {"avx2", "", &run_avx2}, {"sse41", "", &run_sse41}}};

TEST(CpuVariant, AForcedTierRunsTheBestTierAtOrBelowIt) {
  EXPECT_EQ(pick_cpu_variant(kGapped, "avx2").fn(), 1);
  EXPECT_EQ(pick_cpu_variant(kGapped, "sse41").fn(), 2);
  if (cpu_runs_tier("avx512")) {
    EXPECT_EQ(pick_cpu_variant(kGapped, "avx512").fn(), 1);  // as on a Skylake
  }
  if (cpu_runs_tier("avx512_vnni")) {
    EXPECT_EQ(pick_cpu_variant(kGapped, "avx512_vnni").fn(), 0);
  }
  EXPECT_EQ(pick_cpu_variant(kGapped, "").fn(), cpu_runs_tier("avx512_vnni") ? 0 : 1);
  const CpuKernel<int (*)(), 1> vnni_only{"vnni_only", {{"avx512_vnni", "", &run_vnni}}};
  try {
    pick_cpu_variant(vnni_only, "avx2");
    ADD_FAILURE() << "a tier below all of the kernel's ran";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "kernel vnni_only has no CPU tier at or below 'avx2' (it has: avx512_vnni)");
  }
  try {
    pick_cpu_variant(kGapped, "avx9000");
    ADD_FAILURE() << "an unknown tier ran";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).find("kernel gapped: 'avx9000' is not a CPU tier"), 0u) << e.what();
  }
  if (!cpu_runs_tier("avx512_amx")) {
    // Refused even though avx512_vnni, below it, might run: a forced tier is the whole call's.
    EXPECT_THROW(pick_cpu_variant(kGapped, "avx512_amx"), Error);
  }
}

}  // namespace
}  // namespace npukit
