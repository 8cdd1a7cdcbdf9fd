#include "simulator/report/roofline_svg.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "runtime/message.h"
#include "runtime/text.h"
#include "simulator/report/text_file.h"

namespace npukit::sim {
namespace {

constexpr double kWidth = 760, kHeight = 500;
constexpr double kLeft = 90, kRight = 600, kTop = 50, kBottom = 430;  // plot area; labels right of it


// 1e12 -> "1T", 0.01 -> "0.01": decade tick labels.
std::string decade_label(int e) {
  static const char* prefixes[] = {"", "k", "M", "G", "T", "P", "E"};
  if (e < 0) return e >= -3 ? fmt::format("{:.3g}", std::pow(10.0, e)) : fmt::format("{:.0e}", std::pow(10.0, e));
  const int group = std::min(e / 3, 6);
  return fmt::format("{:.0f}{}", std::pow(10.0, e - 3 * group), prefixes[group]);
}

std::string si(double v) {
  static const char* prefixes[] = {"", " k", " M", " G", " T", " P"};
  int i = 0;
  while (v >= 1000 && i < 5) v /= 1000, ++i;
  return fmt::format("{:.3g}{}", v, prefixes[i]);
}

struct Axes {
  int x_lo, x_hi, y_lo, y_hi;  // decades
  double x(double ai) const {
    return kLeft + (std::log10(ai) - x_lo) / (x_hi - x_lo) * (kRight - kLeft);
  }
  double y(double ops) const {
    return kBottom - (std::log10(ops) - y_lo) / (y_hi - y_lo) * (kBottom - kTop);
  }
};

}  // namespace

std::string roofline_svg(const SimResult& s) {
  const Roofline& r = s.cost.roofline;
  const double bw = std::max(r.bandwidth_bytes_per_second, 1.0);
  std::vector<Roof> roofs;
  for (const Roof& roof : r.roofs)
    if (roof.ops_per_second > 0) roofs.push_back(roof);
  if (roofs.empty()) roofs.push_back({"peak", std::max(r.peak_ops_per_second, bw)});
  double roof_lo = roofs.front().ops_per_second, roof_hi = roof_lo;
  for (const Roof& roof : roofs) roof_lo = std::min(roof_lo, roof.ops_per_second), roof_hi = std::max(roof_hi, roof.ops_per_second);
  const bool has_point = r.arithmetic_intensity > 0 && r.achieved_ops_per_second > 0;

  // Axes span the ridges and the op's point with a decade to spare on each side.
  double ai_lo = roof_lo / bw, ai_hi = roof_hi / bw, ops_lo = roof_lo, ops_hi = roof_hi;
  if (has_point) {
    ai_lo = std::min(ai_lo, r.arithmetic_intensity), ai_hi = std::max(ai_hi, r.arithmetic_intensity);
    ops_lo = std::min(ops_lo, r.achieved_ops_per_second);
  }
  Axes ax;
  ax.x_lo = static_cast<int>(std::floor(std::log10(ai_lo))) - 1;
  ax.x_hi = static_cast<int>(std::ceil(std::log10(ai_hi))) + 1;
  ax.y_lo = static_cast<int>(std::floor(std::log10(ops_lo))) - 1;
  ax.y_hi = static_cast<int>(std::ceil(std::log10(ops_hi * 1.01))) + 1;

  std::string o;
  append(o,
         "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
         "font-family=\"sans-serif\" font-size=\"12\">\n",
         kWidth, kHeight);
  append(o, "<title>{}</title>\n", xml_escape("Roofline: " + s.analysis.op + " on " + s.arch.name));
  o += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  append(o, "<text x=\"{}\" y=\"28\" font-size=\"15\">{}</text>\n", kLeft,
         xml_escape("Roofline: " + s.analysis.op + " on " + s.arch.name + " (bound: " + to_string(s.cost.bound) + ")"));
  append(o, "<g id=\"axes\" stroke=\"black\" fill=\"none\">\n<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/>\n</g>\n",
         kLeft, kTop, kRight - kLeft, kBottom - kTop);
  o += "<g id=\"ticks\" stroke=\"#ccc\">\n";
  for (int e = ax.x_lo; e <= ax.x_hi; ++e) {
    const double x = ax.x(std::pow(10.0, e));
    append(o, "<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\"/>\n", x, kTop, kBottom);
    append(o, "<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\" stroke=\"none\" fill=\"black\">{}</text>\n", x,
           kBottom + 16, decade_label(e));
  }
  for (int e = ax.y_lo; e <= ax.y_hi; ++e) {
    const double y = ax.y(std::pow(10.0, e));
    append(o, "<line x1=\"{0}\" y1=\"{2:.1f}\" x2=\"{1}\" y2=\"{2:.1f}\"/>\n", kLeft, kRight, y);
    append(o, "<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\" stroke=\"none\" fill=\"black\">{}</text>\n", kLeft - 6,
           y + 4, decade_label(e));
  }
  o += "</g>\n";
  append(o, "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">arithmetic intensity (ops / DRAM byte)</text>\n",
         (kLeft + kRight) / 2, kBottom + 40);
  append(o, "<text transform=\"translate(22,{}) rotate(-90)\" text-anchor=\"middle\">ops / second (whole chip)</text>\n",
         (kTop + kBottom) / 2);

  // Bandwidth roof: ops = AI × bandwidth, from the left edge (or the bottom) to the highest ridge.
  const double x0 = std::max(std::pow(10.0, ax.x_lo), std::pow(10.0, ax.y_lo) / bw);
  append(o,
         "<g id=\"bandwidth-roof\" stroke=\"#1f77b4\" stroke-width=\"2\">\n"
         "<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\"/>\n"
         "<text x=\"{:.1f}\" y=\"{:.1f}\" stroke=\"none\" fill=\"#1f77b4\">{}</text>\n</g>\n",
         ax.x(x0), ax.y(x0 * bw), ax.x(roof_hi / bw), ax.y(roof_hi), ax.x(x0) + 8, ax.y(x0 * bw) - 8,
         xml_escape("DRAM " + si(bw) + "B/s"));
  o += "<g id=\"compute-roofs\" stroke=\"#d62728\" stroke-width=\"2\">\n";
  for (const Roof& roof : roofs) {
    const double y = ax.y(roof.ops_per_second);
    append(o,
           "<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\"/>\n"
           "<text x=\"{}\" y=\"{:.1f}\" stroke=\"none\" fill=\"#d62728\">{}</text>\n",
           ax.x(roof.ops_per_second / bw), y, kRight, y, kRight + 6, y + 4,
           xml_escape(roof.label + " " + si(roof.ops_per_second) + "ops/s"));
  }
  o += "</g>\n";
  if (has_point) {
    const double px = ax.x(r.arithmetic_intensity), py = ax.y(r.achieved_ops_per_second);
    o += "<g id=\"op-point\">\n";
    if (r.attainable_ops_per_second > 0)
      append(o,
             "<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"#2ca02c\" "
             "stroke-dasharray=\"4 3\"/>\n",
             px, py, ax.y(r.attainable_ops_per_second));
    append(o,
           "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"5\" fill=\"#2ca02c\"/>\n"
           "<text x=\"{:.1f}\" y=\"{:.1f}\" fill=\"#2ca02c\">{}</text>\n</g>\n",
           px, py, px + 8, py + 16,
           xml_escape(fmt::format("{}: {}ops/s at {:.3g} ops/B", s.analysis.op, si(r.achieved_ops_per_second),
                                  r.arithmetic_intensity)));
  } else {
    append(o, "<text x=\"{}\" y=\"{}\">{}</text>\n", kLeft + 10, kBottom - 10,
           xml_escape(s.analysis.op + ": no DRAM traffic or no time: no point to plot"));
  }
  o += "</svg>\n";
  return o;
}

void write_roofline_svg(const SimResult& s, const std::string& path) {
  write_text_file(path, roofline_svg(s), "roofline");
}

}  // namespace npukit::sim
