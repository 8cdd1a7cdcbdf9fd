#include "tools/decode/plan_svg.h"

#include <algorithm>
#include <map>

#include "runtime/message.h"
#include "runtime/text.h"
#include "simulator/report/text_file.h"

namespace npukit::decode {

namespace {

constexpr double kWidth = 960, kLeft = 40, kBar = 880, kBarHeight = 44;

std::string num(double v, int digits = 1) { return fmt::format("{:.{}f}", v, digits); }

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

void bar(std::string& o, double y, const std::string& title, const std::vector<Segment>& segs, double scale) {
  append(o, "<text x=\"{}\" y=\"{}\" font-size=\"13\">{}</text>\n", kLeft, num(y - 8), xml_escape(title));
  double x = kLeft;
  for (const Segment& s : segs) {
    const double w = scale > 0 ? kBar * s.value / scale : 0;
    append(o,
           "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\" stroke=\"white\" stroke-width=\"0.5\">"
           "<title>{}</title></rect>\n",
           num(x, 2), num(y), num(w, 2), kBarHeight, s.fill, xml_escape(s.tip));
    // A label where it fits (about 6.5 px a character at 11 px).
    if (w > 6.5 * static_cast<double>(std::min<size_t>(s.label.size(), 18)) + 6)
      append(o, "<text x=\"{}\" y=\"{}\" font-size=\"11\" fill=\"white\">{}</text>\n", num(x + 3),
             num(y + kBarHeight / 2 + 4), xml_escape(s.label.substr(0, 18)));
    x += w;
  }
}

}  // namespace

std::string plan_svg(const Plan& p) {
  std::string o;
  const double height = 330;
  append(o,
         "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
         "font-family=\"sans-serif\" font-size=\"12\">\n",
         kWidth, height);
  const std::string title = "Decode plan: " + p.model + " on " + p.arch + ", " + to_string(p.request.memory.weights) +
                            " weights, context " + std::to_string(p.request.memory.context) + ", batch " +
                            std::to_string(p.request.memory.batch) + ": " + num(p.tokens_per_s, 2) + " tokens/s";
  append(o, "<title>{}</title>\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n", xml_escape(title));
  append(o, "<text x=\"{}\" y=\"26\" font-size=\"15\">{}</text>\n", kLeft, xml_escape(title));

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
  o += "<g id=\"time\">\n";
  bar(o, 74, "decode step: " + num(p.token_time_us / 1e3, 2) + " ms per step, per op over all layers (CPU fallback in red: " +
                 num(100 * p.decode.fallback_time_share()) + "%)",
      time, p.token_time_us);
  o += "</g>\n";

  const MemoryPlan& m = p.memory;
  std::vector<Segment> mem;
  const std::vector<std::string> fills = {"#8c564b", "#17becf", "#bcbd22"};
  for (size_t i = 0; i < m.parts.size(); ++i)
    mem.push_back({m.parts[i].name, fills[i % fills.size()], m.parts[i].name + ": " + format_bytes(m.parts[i].bytes),
                   static_cast<double>(m.parts[i].bytes)});
  const double scale = static_cast<double>(std::max(m.capacity, m.total));
  if (m.capacity > m.total) mem.push_back({"free", "#e5e5e5", "free: " + format_bytes(m.capacity - m.total),
                                      static_cast<double>(m.capacity - m.total)});
  o += "<g id=\"memory\">\n";
  bar(o, 190, "memory: " + format_bytes(m.total) + " of " + (m.capacity > 0 ? format_bytes(m.capacity) : std::string("? (no dram.bytes)")) +
                  "; largest context " + std::to_string(m.max_context) + ", largest batch " + std::to_string(m.max_batch),
      mem, scale);
  if (m.capacity > 0) {
    const double x = kLeft + kBar * static_cast<double>(m.capacity) / scale;
    append(o,
           "<line x1=\"{0}\" y1=\"180\" x2=\"{0}\" y2=\"{1}\" stroke=\"black\" stroke-width=\"2\"/>\n"
           "<text x=\"{2}\" y=\"{3}\" text-anchor=\"end\">dram.bytes</text>\n",
           num(x), num(190 + kBarHeight + 10), num(x - 4), num(190 + kBarHeight + 24));
  }
  o += "</g>\n";
  o += "<g id=\"legend\" font-size=\"11\">\n";
  double lx = kLeft;
  for (const auto& [name, fill] : std::vector<std::pair<std::string, std::string>>{
           {"attention", "#1f77b4"}, {"mlp", "#2ca02c"}, {"norm", "#9467bd"}, {"head", "#ff7f0e"}, {"cpu fallback", "#d62728"}}) {
    append(o, "<rect x=\"{}\" y=\"290\" width=\"12\" height=\"12\" fill=\"{}\"/><text x=\"{}\" y=\"300\">{}</text>\n",
           num(lx), fill, num(lx + 16), xml_escape(name));
    lx += 110;
  }
  o += "</g>\n</svg>\n";
  return o;
}

void write_plan_svg(const Plan& p, const std::string& path) { sim::write_text_file(path, plan_svg(p), "decode plan svg"); }

}  // namespace npukit::decode
