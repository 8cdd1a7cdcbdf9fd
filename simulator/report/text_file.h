// Writing a report to a path: one place that turns a failed open or write into an error
// that names the path and what was being written.
#pragma once

#include <fstream>
#include <stdexcept>
#include <string>

namespace npukit::sim {

inline void write_text_file(const std::string& path, const std::string& text, const char* what) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw std::runtime_error(std::string(what) + ": cannot open " + path + " for writing");
  out << text;
  out.close();
  if (!out) throw std::runtime_error(std::string(what) + ": writing " + path + " failed");
}

}  // namespace npukit::sim
