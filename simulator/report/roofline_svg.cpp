#include "simulator/report/roofline_svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "runtime/text.h"
#include "simulator/report/text_file.h"

namespace npukit::sim {
namespace {

constexpr double kWidth = 760, kHeight = 500;
constexpr double kLeft = 90, kRight = 600, kTop = 50, kBottom = 430;  // plot area; labels right of it


std::string num(double v, const char* fmt = "%.1f") {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

// 1e12 -> "1T", 0.01 -> "0.01": decade tick labels.
std::string decade_label(int e) {
  static const char* prefixes[] = {"", "k", "M", "G", "T", "P", "E"};
  if (e < 0) return num(std::pow(10.0, e), e >= -3 ? "%.3g" : "%.0e");
  const int group = std::min(e / 3, 6);
  return num(std::pow(10.0, e - 3 * group), "%.0f") + prefixes[group];
}

std::string si(double v) {
  static const char* prefixes[] = {"", " k", " M", " G", " T", " P"};
  int i = 0;
  while (v >= 1000 && i < 5) v /= 1000, ++i;
  return num(v, "%.3g") + prefixes[i];
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

  std::ostringstream o;
  o << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << kWidth << "\" height=\"" << kHeight << "\" viewBox=\"0 0 "
    << kWidth << " " << kHeight << "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  o << "<title>" << xml_escape("Roofline: " + s.analysis.op + " on " + s.arch.name) << "</title>\n";
  o << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  o << "<text x=\"" << kLeft << "\" y=\"28\" font-size=\"15\">"
    << xml_escape("Roofline: " + s.analysis.op + " on " + s.arch.name + " (bound: " + to_string(s.cost.bound) + ")")
    << "</text>\n";
  o << "<g id=\"axes\" stroke=\"black\" fill=\"none\">\n"
    << "<rect x=\"" << kLeft << "\" y=\"" << kTop << "\" width=\"" << kRight - kLeft << "\" height=\"" << kBottom - kTop
    << "\"/>\n</g>\n";
  o << "<g id=\"ticks\" stroke=\"#ccc\">\n";
  for (int e = ax.x_lo; e <= ax.x_hi; ++e) {
    const double x = ax.x(std::pow(10.0, e));
    o << "<line x1=\"" << num(x) << "\" y1=\"" << kTop << "\" x2=\"" << num(x) << "\" y2=\"" << kBottom << "\"/>\n";
    o << "<text x=\"" << num(x) << "\" y=\"" << kBottom + 16 << "\" text-anchor=\"middle\" stroke=\"none\" fill=\"black\">"
      << decade_label(e) << "</text>\n";
  }
  for (int e = ax.y_lo; e <= ax.y_hi; ++e) {
    const double y = ax.y(std::pow(10.0, e));
    o << "<line x1=\"" << kLeft << "\" y1=\"" << num(y) << "\" x2=\"" << kRight << "\" y2=\"" << num(y) << "\"/>\n";
    o << "<text x=\"" << kLeft - 6 << "\" y=\"" << num(y + 4) << "\" text-anchor=\"end\" stroke=\"none\" fill=\"black\">"
      << decade_label(e) << "</text>\n";
  }
  o << "</g>\n";
  o << "<text x=\"" << (kLeft + kRight) / 2 << "\" y=\"" << kBottom + 40
    << "\" text-anchor=\"middle\">arithmetic intensity (ops / DRAM byte)</text>\n";
  o << "<text transform=\"translate(22," << (kTop + kBottom) / 2
    << ") rotate(-90)\" text-anchor=\"middle\">ops / second (whole chip)</text>\n";

  // Bandwidth roof: ops = AI × bandwidth, from the left edge (or the bottom) to the highest ridge.
  const double x0 = std::max(std::pow(10.0, ax.x_lo), std::pow(10.0, ax.y_lo) / bw);
  o << "<g id=\"bandwidth-roof\" stroke=\"#1f77b4\" stroke-width=\"2\">\n"
    << "<line x1=\"" << num(ax.x(x0)) << "\" y1=\"" << num(ax.y(x0 * bw)) << "\" x2=\"" << num(ax.x(roof_hi / bw))
    << "\" y2=\"" << num(ax.y(roof_hi)) << "\"/>\n"
    << "<text x=\"" << num(ax.x(x0) + 8) << "\" y=\"" << num(ax.y(x0 * bw) - 8) << "\" stroke=\"none\" fill=\"#1f77b4\">"
    << xml_escape("DRAM " + si(bw) + "B/s") << "</text>\n</g>\n";
  o << "<g id=\"compute-roofs\" stroke=\"#d62728\" stroke-width=\"2\">\n";
  for (const Roof& roof : roofs) {
    const double y = ax.y(roof.ops_per_second);
    o << "<line x1=\"" << num(ax.x(roof.ops_per_second / bw)) << "\" y1=\"" << num(y) << "\" x2=\"" << kRight
      << "\" y2=\"" << num(y) << "\"/>\n"
      << "<text x=\"" << kRight + 6 << "\" y=\"" << num(y + 4) << "\" stroke=\"none\" fill=\"#d62728\">"
      << xml_escape(roof.label + " " + si(roof.ops_per_second) + "ops/s") << "</text>\n";
  }
  o << "</g>\n";
  if (has_point) {
    const double px = ax.x(r.arithmetic_intensity), py = ax.y(r.achieved_ops_per_second);
    o << "<g id=\"op-point\">\n";
    if (r.attainable_ops_per_second > 0)
      o << "<line x1=\"" << num(px) << "\" y1=\"" << num(py) << "\" x2=\"" << num(px) << "\" y2=\""
        << num(ax.y(r.attainable_ops_per_second)) << "\" stroke=\"#2ca02c\" stroke-dasharray=\"4 3\"/>\n";
    o << "<circle cx=\"" << num(px) << "\" cy=\"" << num(py) << "\" r=\"5\" fill=\"#2ca02c\"/>\n"
      << "<text x=\"" << num(px + 8) << "\" y=\"" << num(py + 16) << "\" fill=\"#2ca02c\">"
      << xml_escape(s.analysis.op + ": " + si(r.achieved_ops_per_second) + "ops/s at " + num(r.arithmetic_intensity, "%.3g") +
                " ops/B")
      << "</text>\n</g>\n";
  } else {
    o << "<text x=\"" << kLeft + 10 << "\" y=\"" << kBottom - 10 << "\">"
      << xml_escape(s.analysis.op + ": no DRAM traffic or no time: no point to plot") << "</text>\n";
  }
  o << "</svg>\n";
  return o.str();
}

void write_roofline_svg(const SimResult& s, const std::string& path) {
  write_text_file(path, roofline_svg(s), "roofline");
}

}  // namespace npukit::sim
