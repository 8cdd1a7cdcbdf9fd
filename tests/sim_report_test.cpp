// The simulator's reports: the JSON keys scripts rely on, a Chrome trace that parses with
// one named track per unit, a well-formed roofline SVG, and readable tables.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "simulator/report/json_report.h"
#include "simulator/report/roofline_svg.h"
#include "simulator/report/table.h"
#include "simulator/report/trace.h"
#include "sim_test_fixtures.h"

namespace npukit::sim {
namespace {

SimResult gemv() { return simulate(testing::decode_gemv(), preset("edge-6tops"), false); }

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(SimReport, JsonHasEveryKey) {
  const nlohmann::json j = to_json(gemv());
  for (const char* key : {"op", "shape", "arch", "total_cycles", "time_us", "bound", "critical_path", "dram_bytes", "macs",
                          "units", "roofline", "violations", "notes", "errors", "warnings", "cores_used"})
    EXPECT_TRUE(j.contains(key)) << key;
  for (const char* unit : {"matrix", "vector", "dma_in", "dma_out", "sync"}) {
    ASSERT_TRUE(j["units"].contains(unit)) << unit;
    EXPECT_TRUE(j["units"][unit]["busy_cycles"].is_number_integer()) << unit;
    EXPECT_TRUE(j["units"][unit]["utilization"].is_number()) << unit;
  }
  for (const char* key : {"arithmetic_intensity", "attainable_ops_per_second", "achieved_ops_per_second",
                          "peak_ops_per_second", "bandwidth_bytes_per_second", "roofs"})
    EXPECT_TRUE(j["roofline"].contains(key)) << key;
  EXPECT_EQ(j["bound"], "bandwidth");
  EXPECT_EQ(j["arch"], "edge-6tops");
  EXPECT_EQ(j["macs"], 4096 * 4096);
  EXPECT_EQ(j["dram_bytes"], testing::decode_gemv().dram_bytes());
  EXPECT_EQ(j["shape"]["K"], 4096);
  ASSERT_FALSE(j["violations"].empty());  // M = 1 on m0 = 8
  for (const char* key : {"rule", "op", "func", "loop", "value", "limit", "message", "suggestion", "severity"})
    EXPECT_TRUE(j["violations"][0].contains(key)) << key;
  EXPECT_EQ(j["violations"][0]["rule"], "matrix_tile");
  EXPECT_FALSE(j.contains("timeline"));
  // Round trip through text: what a script reads.
  EXPECT_EQ(nlohmann::json::parse(j.dump()), j);
}

TEST(SimReport, TraceParsesWithOneNamedTrackPerUnit) {
  const SimResult s = gemv();
  const nlohmann::json t = nlohmann::json::parse(trace_json(s));
  ASSERT_TRUE(t["traceEvents"].is_array());
  std::map<int, std::string> names;
  int complete = 0;
  double end_us = 0;
  for (const auto& e : t["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "thread_name") {
      EXPECT_FALSE(names.count(e["tid"].get<int>())) << "tid named twice";
      names[e["tid"].get<int>()] = e["args"]["name"];
    }
    if (e["ph"] == "X") {
      ++complete;
      EXPECT_GE(e["dur"].get<double>(), 0);
      EXPECT_TRUE(names.count(e["tid"].get<int>())) << "event on an unnamed track";
      end_us = std::max(end_us, e["ts"].get<double>() + e["dur"].get<double>());
    }
  }
  ASSERT_EQ(names.size(), kPipes.size());
  for (Pipe p : kPipes) EXPECT_EQ(names[static_cast<int>(p) + 1], to_string(p));
  EXPECT_GT(complete, 10);
  EXPECT_LT(complete, 200);  // 171 iterations, capped
  EXPECT_NEAR(end_us, s.cost.time_us, 1e-6);
}

// A minimal well-formedness check: every tag closed in order, attributes quoted, text
// escaped. (The repo has no XML parser dependency; this catches what breaks viewers.)
void expect_well_formed_xml(const std::string& xml) {
  std::vector<std::string> open;
  size_t i = 0;
  while ((i = xml.find('<', i)) != std::string::npos) {
    const size_t close = xml.find('>', i);
    ASSERT_NE(close, std::string::npos);
    const std::string tag = xml.substr(i + 1, close - i - 1);
    ASSERT_FALSE(tag.empty());
    if (tag[0] == '/') {
      ASSERT_FALSE(open.empty()) << "stray </" << tag << ">";
      EXPECT_EQ(open.back(), tag.substr(1));
      open.pop_back();
    } else if (tag.back() != '/') {
      open.push_back(tag.substr(0, tag.find(' ')));
    }
    EXPECT_EQ(std::count(tag.begin(), tag.end(), '"') % 2, 0) << tag;
    i = close + 1;
  }
  EXPECT_TRUE(open.empty()) << "unclosed <" << (open.empty() ? "" : open.back()) << ">";
  EXPECT_FALSE(std::regex_search(xml, std::regex("&(?!amp;|lt;|gt;|quot;)"))) << "unescaped &";
}

TEST(SimReport, RooflineSvgIsWellFormedWithRoofsAndThePoint) {
  SimResult s = gemv();
  s.analysis.op = "gemv<&>";  // must be escaped
  const std::string svg = roofline_svg(s);
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_TRUE(has(svg, "</svg>"));
  EXPECT_TRUE(has(svg, "id=\"bandwidth-roof\""));
  EXPECT_TRUE(has(svg, "id=\"compute-roofs\""));
  EXPECT_TRUE(has(svg, "int8 matrix"));
  EXPECT_TRUE(has(svg, "fp16 matrix"));
  EXPECT_TRUE(has(svg, "DRAM 34.1 GB/s"));
  EXPECT_TRUE(has(svg, "id=\"op-point\""));
  EXPECT_TRUE(has(svg, "<circle"));
  EXPECT_TRUE(has(svg, "gemv&lt;&amp;&gt;"));
  expect_well_formed_xml(svg);
}

TEST(SimReport, TableShowsTheNumbersAndTheFixes) {
  const SimResult s = gemv();
  const std::string t = format_table(s);
  for (const char* part : {"int8_gemv", "K=4096 M=1 N=4096", "edge-6tops", "bound       bandwidth", "matrix", "dma_in",
                           "sync", "dram bytes", "16,797,696", "macs        16,777,216", "AI 2.00 ops/B",
                           "[matrix_tile]", "fix: the tile has no loop over M"})
    EXPECT_TRUE(has(t, part)) << part << "\n" << t;
  SummaryTable summary;
  summary.add(s);
  const std::string rows = summary.str();
  const std::string header = rows.substr(0, rows.find('\n') + 1), row = rows.substr(header.size());
  EXPECT_TRUE(has(row, "int8_gemv")) << row;
  EXPECT_TRUE(has(row, "bandwidth")) << row;
  EXPECT_TRUE(has(row, "dma_in")) << row;
  EXPECT_TRUE(has(row, "0 E, 1 W")) << row;
  EXPECT_EQ(row.find('\n'), row.size() - 1);  // one line
  EXPECT_TRUE(has(header, "bound"));
  // Columns line up: every column starts where its header does, however long the shape.
  EXPECT_EQ(row.find("bandwidth"), header.find("bound")) << rows;
}

TEST(SimReport, WritesFilesAndNamesTheBadPath) {
  const SimResult s = gemv();
  const auto dir = std::filesystem::temp_directory_path() / "npukit_sim_report_test";
  std::filesystem::create_directories(dir);
  write_trace(s, (dir / "trace.json").string());
  write_roofline_svg(s, (dir / "roofline.svg").string());
  std::ifstream in(dir / "trace.json");
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), trace_json(s));
  std::filesystem::remove_all(dir);
  try {
    write_trace(s, "/nonexistent-dir/trace.json");
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_TRUE(has(e.what(), "/nonexistent-dir/trace.json")) << e.what();
  }
}

}  // namespace
}  // namespace npukit::sim
