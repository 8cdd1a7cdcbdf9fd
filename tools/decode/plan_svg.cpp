#include "tools/decode/plan_svg.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>

#include "runtime/text.h"
#include "simulator/report/text_file.h"

namespace npukit::decode {

namespace {

constexpr double kWidth = 960, kLeft = 40, kBar = 880, kBarHeight = 44;

std::string num(double v, const char* fmt = "%.1f") {
  char b[64];
  std::snprintf(b, sizeof b, fmt, v);
  return b;
}

// One colour family per group, lighter for each further op of the group; CPU rows red.
std::string colour(const OpRow& r, int index_in_group) {
  static const std::map<std::string, std::vector<std::string>> palette = {
      {"attention", {"#1f77b4", "#4c92c3", "#7aaed2", "#a7c9e1", "#d3e4f0"}},
      {"mlp", {"#2ca02c", "#56b356", "#80c680", "#abd9ab"}},
      {"norm", {"#9467bd", "#b394d1"}},
      {"head", {"#ff7f0e", "#ffa04f", "#ffc08f", "#ffdfc0"}},
  };
  if (r.unit == "cpu") return index_in_group % 2 ? "#e36363" : "#d62728";
  auto it = palette.find(r.group);
  if (it == palette.end()) return "#999999";
  return it->second[static_cast<size_t>(index_in_group) % it->second.size()];
}

struct Segment {
  std::string label, fill, tip;
  double value;
};

void bar(std::ostringstream& o, double y, const std::string& title, const std::vector<Segment>& segs, double scale) {
  o << "<text x=\"" << kLeft << "\" y=\"" << num(y - 8) << "\" font-size=\"13\">" << xml_escape(title) << "</text>\n";
  double x = kLeft;
  for (const Segment& s : segs) {
    const double w = scale > 0 ? kBar * s.value / scale : 0;
    o << "<rect x=\"" << num(x, "%.2f") << "\" y=\"" << num(y) << "\" width=\"" << num(w, "%.2f") << "\" height=\""
      << kBarHeight << "\" fill=\"" << s.fill << "\" stroke=\"white\" stroke-width=\"0.5\"><title>" << xml_escape(s.tip)
      << "</title></rect>\n";
    // A label where it fits (about 6.5 px a character at 11 px).
    if (w > 6.5 * static_cast<double>(std::min<size_t>(s.label.size(), 18)) + 6)
      o << "<text x=\"" << num(x + 3) << "\" y=\"" << num(y + kBarHeight / 2 + 4) << "\" font-size=\"11\" fill=\"white\">"
        << xml_escape(s.label.substr(0, 18)) << "</text>\n";
    x += w;
  }
}

}  // namespace

std::string plan_svg(const Plan& p) {
  std::ostringstream o;
  const double height = 330;
  o << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << kWidth << "\" height=\"" << height << "\" viewBox=\"0 0 "
    << kWidth << " " << height << "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  const std::string title = "Decode plan: " + p.model + " on " + p.arch + ", " + to_string(p.request.memory.weights) +
                            " weights, context " + std::to_string(p.request.memory.context) + ", batch " +
                            std::to_string(p.request.memory.batch) + ": " + num(p.tokens_per_s, "%.2f") + " tokens/s";
  o << "<title>" << xml_escape(title) << "</title>\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  o << "<text x=\"" << kLeft << "\" y=\"26\" font-size=\"15\">" << xml_escape(title) << "</text>\n";

  std::vector<Segment> time;
  std::map<std::string, int> seen;
  for (const OpRow& r : p.decode.rows) {
    if (r.time_us <= 0) continue;
    const int i = seen[r.group]++;
    time.push_back({r.label, colour(r, i),
                    r.label + " (" + r.op + " " + r.shape + ", " + r.unit + "): " + num(r.time_us) + " us, " +
                        num(100 * r.share) + "%, " + r.bound + " bound",
                    r.time_us});
  }
  o << "<g id=\"time\">\n";
  bar(o, 74, "decode step: " + num(p.token_time_us / 1e3, "%.2f") + " ms per step, per op over all layers (CPU fallback in red: " +
                 num(100 * p.decode.fallback_time_share()) + "%)",
      time, p.token_time_us);
  o << "</g>\n";

  const MemoryPlan& m = p.memory;
  std::vector<Segment> mem;
  const std::vector<std::string> fills = {"#8c564b", "#17becf", "#bcbd22"};
  for (size_t i = 0; i < m.parts.size(); ++i)
    mem.push_back({m.parts[i].name, fills[i % fills.size()], m.parts[i].name + ": " + format_bytes(m.parts[i].bytes),
                   static_cast<double>(m.parts[i].bytes)});
  const double scale = static_cast<double>(std::max(m.capacity, m.total));
  if (m.capacity > m.total) mem.push_back({"free", "#e5e5e5", "free: " + format_bytes(m.capacity - m.total),
                                      static_cast<double>(m.capacity - m.total)});
  o << "<g id=\"memory\">\n";
  bar(o, 190, "memory: " + format_bytes(m.total) + " of " + (m.capacity > 0 ? format_bytes(m.capacity) : std::string("? (no dram.bytes)")) +
                  "; largest context " + std::to_string(m.max_context) + ", largest batch " + std::to_string(m.max_batch),
      mem, scale);
  if (m.capacity > 0) {
    const double x = kLeft + kBar * static_cast<double>(m.capacity) / scale;
    o << "<line x1=\"" << num(x) << "\" y1=\"180\" x2=\"" << num(x) << "\" y2=\"" << num(190 + kBarHeight + 10)
      << "\" stroke=\"black\" stroke-width=\"2\"/>\n<text x=\"" << num(x - 4) << "\" y=\"" << num(190 + kBarHeight + 24)
      << "\" text-anchor=\"end\">dram.bytes</text>\n";
  }
  o << "</g>\n";
  o << "<g id=\"legend\" font-size=\"11\">\n";
  double lx = kLeft;
  for (const auto& [name, fill] : std::vector<std::pair<std::string, std::string>>{
           {"attention", "#1f77b4"}, {"mlp", "#2ca02c"}, {"norm", "#9467bd"}, {"head", "#ff7f0e"}, {"cpu fallback", "#d62728"}}) {
    o << "<rect x=\"" << num(lx) << "\" y=\"290\" width=\"12\" height=\"12\" fill=\"" << fill << "\"/><text x=\""
      << num(lx + 16) << "\" y=\"300\">" << xml_escape(name) << "</text>\n";
    lx += 110;
  }
  o << "</g>\n</svg>\n";
  return o.str();
}

void write_plan_svg(const Plan& p, const std::string& path) { sim::write_text_file(path, plan_svg(p), "decode plan svg"); }

}  // namespace npukit::decode
