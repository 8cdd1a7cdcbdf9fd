#include "simulator/arch/arch_spec.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>

#include "runtime/byte_limit.h"
#include "runtime/closest_name.h"
#include "runtime/message.h"
#include "simulator/arch/dtype_bytes.h"

#ifndef NPUKIT_ARCH_PRESET_DIR
#error "NPUKIT_ARCH_PRESET_DIR must be defined (simulator/CMakeLists.txt sets it)"
#endif

namespace npukit::sim {

namespace {

const std::vector<std::pair<Dtype, const char*>> kDtypes = {
    {Dtype::int8, "int8"}, {Dtype::fp16, "fp16"}, {Dtype::bf16, "bf16"},
    {Dtype::fp32, "fp32"}, {Dtype::int32, "int32"}, {Dtype::int4, "int4"}};
const std::vector<std::pair<MatrixKind, const char*>> kKinds = {
    {MatrixKind::cube, "cube"}, {MatrixKind::systolic, "systolic"}};
const std::vector<std::pair<DmaDirection, const char*>> kDmaDirections = {
    {DmaDirection::both, "both"}, {DmaDirection::in, "in"}, {DmaDirection::out, "out"}};
const std::vector<std::pair<Dataflow, const char*>> kDataflows = {
    {Dataflow::ws, "ws"}, {Dataflow::os, "os"}, {Dataflow::is, "is"}};
const std::vector<std::pair<OperandLayout, const char*>> kLayouts = {
    {OperandLayout::nd, "nd"}, {OperandLayout::nz, "nz"}};
const std::vector<std::pair<Unit, const char*>> kUnits = {
    {Unit::matrix, "matrix"}, {Unit::vector, "vector"}, {Unit::dma, "dma"}};
const std::vector<std::pair<VectorOp, const char*>> kVectorOps = {
    {VectorOp::add, "add"}, {VectorOp::mul, "mul"},     {VectorOp::fma, "fma"},
    {VectorOp::exp, "exp"}, {VectorOp::rsqrt, "rsqrt"}, {VectorOp::div, "div"},
    {VectorOp::convert, "convert"}};

template <typename E>
const char* name_of(const std::vector<std::pair<E, const char*>>& table, E e) {
  for (const auto& [value, name] : table)
    if (value == e) return name;
  return "?";
}

template <typename E>
std::vector<std::string> names_of(const std::vector<std::pair<E, const char*>>& table) {
  std::vector<std::string> out;
  for (const auto& entry : table) out.push_back(entry.second);
  return out;
}

std::string join(const std::vector<std::string>& items, const char* sep) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) out += (i ? sep : "") + items[i];
  return out;
}

// "a, b or c": the choices of an enum rule.
std::string one_of(const std::vector<std::string>& items) {
  if (items.size() == 1) return items[0];
  std::vector<std::string> head(items.begin(), items.end() - 1);
  return join(head, ", ") + " or " + items.back();
}

bool is_pow2(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

std::string format_double(double v) { return fmt::format("{:g}", v); }

// Validates one YAML tree and turns it into an ArchSpec. Every failure is one line:
// "<origin>: <path>[ = <value>]: <rule>".
class Reader {
 public:
  explicit Reader(std::string origin) : origin_(std::move(origin)) {}

  [[noreturn]] void fail(const std::string& path, const std::string& rule) const {
    throw std::runtime_error(message("{}: {}: {}", origin_, path, rule));
  }
  [[noreturn]] void fail(const std::string& path, const YAML::Node& value,
                         const std::string& rule, bool quote_text = true) const {
    fail(path + " = " + show(value, quote_text), rule);
  }

  static std::string child(const std::string& path, const std::string& key) {
    return path.empty() ? key : path + "." + key;
  }
  static std::string item(const std::string& path, size_t i) {
    return fmt::format("{}[{}]", path, i);
  }

  // Rejects unknown and repeated keys. `others` names keys valid elsewhere (another
  // matrix kind) so the message can say why they do not apply here.
  void check_keys(const YAML::Node& map, const std::string& path,
                  const std::vector<std::string>& known,
                  const std::vector<std::string>& others = {},
                  const std::string& others_reason = "") const {
    std::set<std::string> seen;
    for (const auto& kv : map) {
      if (!kv.first.IsScalar()) fail(path.empty() ? "(top level)" : path, "keys must be plain names");
      const std::string key = kv.first.Scalar();
      const std::string key_path = child(path, key);
      if (!seen.insert(key).second) fail(key_path, "duplicate key");
      if (std::find(known.begin(), known.end(), key) != known.end()) continue;
      if (std::find(others.begin(), others.end(), key) != others.end())
        fail(key_path, others_reason);
      std::string guess = closest_name(key, known);
      if (!guess.empty()) fail(key_path, fmt::format("unknown key (did you mean {}?)", guess));
      fail(key_path, fmt::format("unknown key (known keys: {})", join(known, ", ")));
    }
  }

  YAML::Node require(const YAML::Node& map, const std::string& path,
                     const std::string& key) const {
    YAML::Node v = map[key];
    if (!v.IsDefined()) fail(child(path, key), "missing (required)");
    return v;
  }

  void require_map(const YAML::Node& v, const std::string& path) const {
    if (!v.IsMap()) fail(path.empty() ? "(top level)" : path, v, "must be a mapping");
  }
  void require_list(const YAML::Node& v, const std::string& path, const char* what) const {
    if (!v.IsSequence()) fail(path, v, "must be a list");
    if (v.size() == 0) fail(path, v, std::string("must list at least one ") + what);
  }

  std::string text(const YAML::Node& v, const std::string& path) const {
    if (!v.IsScalar()) fail(path, v, "must be a string");
    if (v.Scalar().empty()) fail(path, v, "must not be empty");
    return v.Scalar();
  }

  // Bounds on every number and integer of a spec (docs/simulator/arch-spec.md): far above
  // any real accelerator, low enough that products of a few (MACs per cycle, bytes of
  // double-buffered tiles, cycles × bytes) stay exact in int64 and finite in double.
  static constexpr double kMaxNumber = 1e9;
  static constexpr int64_t kMaxInteger = int64_t(1) << 40;

  // `max_rule`: a key's own bound, checked before the general one (clock_ghz: 100).
  double number(const YAML::Node& v, const std::string& path, double max = kMaxNumber,
                const char* max_rule = "must be at most 1e9 in magnitude") const {
    double out = 0;
    if (!parse_number(v, &out)) fail(path, v, "must be a number");
    if (std::fabs(out) > max) fail(path, v, max_rule, false);
    return out;
  }
  double positive_number(const YAML::Node& v, const std::string& path, double max = kMaxNumber,
                         const char* max_rule = "must be at most 1e9 in magnitude") const {
    double out = number(v, path, max, max_rule);
    if (!(out > 0)) fail(path, v, "must be positive");
    return out;
  }
  double non_negative_number(const YAML::Node& v, const std::string& path) const {
    double out = number(v, path);
    if (out < 0) fail(path, v, "must not be negative");
    return out;
  }

  int64_t integer(const YAML::Node& v, const std::string& path) const {
    double d = 0;
    if (!parse_number(v, &d)) fail(path, v, "must be an integer");
    errno = 0;
    char* end = nullptr;
    const std::string& s = v.Scalar();
    // Decimal only: a leading 0 is octal to strtoll and to some YAML readers, not to others.
    const size_t digits = s.find_first_not_of("+-");
    if (digits != std::string::npos && s[digits] == '0' && s.size() > digits + 1) {
      fail(path, v, "must be a decimal integer without leading zeros");
    }
    long long out = std::strtoll(s.c_str(), &end, 10);
    if (errno != 0 || end == s.c_str() || *end != '\0') fail(path, v, "must be an integer");
    if (out > kMaxInteger || out < -kMaxInteger) fail(path, v, "must be at most 2^40 in magnitude");
    return out;
  }
  int64_t positive_integer(const YAML::Node& v, const std::string& path) const {
    int64_t out = integer(v, path);
    if (out <= 0) fail(path, v, "must be positive");
    return out;
  }
  int64_t non_negative_integer(const YAML::Node& v, const std::string& path) const {
    int64_t out = integer(v, path);
    if (out < 0) fail(path, v, "must not be negative");
    return out;
  }
  // A matrix unit's extent (m0, k0, n0, rows, cols): three of them multiply into MACs per
  // cycle, which must stay exact.
  int64_t matrix_extent(const YAML::Node& v, const std::string& path) const {
    const int64_t out = positive_integer(v, path);
    if (out > kMaxMatrixExtent) fail(path, v, "must be at most 65536");
    return out;
  }
  static constexpr int64_t kMaxMatrixExtent = 65536;

  int64_t power_of_two(const YAML::Node& v, const std::string& path) const {
    int64_t out = integer(v, path);
    if (!is_pow2(out)) fail(path, v, "must be a power of two");
    return out;
  }

  // A YAML boolean, spelled true or false (not yes/no/on/off: one spelling to grep for).
  bool boolean(const YAML::Node& v, const std::string& path) const {
    if (v.IsScalar() && v.Tag() != "!" && (v.Scalar() == "true" || v.Scalar() == "false")) return v.Scalar() == "true";
    fail(path, v, "must be true or false", /*quote_text=*/false);
  }

  template <typename E>
  E choice(const YAML::Node& v, const std::string& path,
           const std::vector<std::pair<E, const char*>>& table) const {
    if (v.IsScalar())
      for (const auto& [value, name] : table)
        if (v.Scalar() == name) return value;
    fail(path, v, "must be " + one_of(names_of(table)), /*quote_text=*/false);
  }

 private:
  // A YAML number: a plain (unquoted) scalar that parses completely as a finite double.
  static bool parse_number(const YAML::Node& v, double* out) {
    if (!v.IsScalar() || v.Tag() == "!") return false;
    const std::string& s = v.Scalar();
    if (s.empty()) return false;
    char* end = nullptr;
    errno = 0;
    double d = std::strtod(s.c_str(), &end);
    if (errno != 0 || *end != '\0' || !std::isfinite(d)) return false;
    *out = d;
    return true;
  }

  // The offending value as the user wrote it; text that is not a number is quoted so
  // that `clock_ghz = "fast"` reads as a string where a number was expected.
  static std::string show(const YAML::Node& v, bool quote_text) {
    if (!v.IsDefined() || v.IsNull()) return "null";
    if (v.IsScalar()) {
      double ignored = 0;
      if (!quote_text || parse_number(v, &ignored)) return v.Scalar();
      return "\"" + v.Scalar() + "\"";
    }
    YAML::Emitter e;
    e.SetSeqFormat(YAML::Flow);
    e.SetMapFormat(YAML::Flow);
    e << v;
    std::string out = e.c_str();
    std::replace(out.begin(), out.end(), '\n', ' ');  // messages are one line
    if (out.size() > 60) out = out.substr(0, 57) + "...";
    return out;
  }

  std::string origin_;
};

MatrixUnit read_matrix(const Reader& r, const YAML::Node& m) {
  const std::string path = "matrix";
  r.require_map(m, path);
  MatrixUnit unit;
  unit.kind = r.choice(r.require(m, path, "kind"), "matrix.kind", kKinds);

  const std::vector<std::string> cube_keys = {"kind", "dtypes", "shapes", "layout"};
  const std::vector<std::string> systolic_keys = {"kind", "dtypes", "rows", "cols", "dataflow"};
  if (unit.kind == MatrixKind::cube)
    r.check_keys(m, path, cube_keys, {"rows", "cols", "dataflow"},
                 "only for kind systolic (this matrix is kind cube)");
  else
    r.check_keys(m, path, systolic_keys, {"shapes", "layout"},
                 "only for kind cube (this matrix is kind systolic)");

  const YAML::Node dtypes = r.require(m, path, "dtypes");
  r.require_list(dtypes, "matrix.dtypes", "dtype");
  for (size_t i = 0; i < dtypes.size(); ++i) {
    const std::string p = Reader::item("matrix.dtypes", i);
    Dtype d = r.choice(dtypes[i], p, kDtypes);
    if (unit.supports(d)) r.fail(p, dtypes[i], "duplicate dtype", false);
    unit.dtypes.push_back(d);
  }
  std::vector<std::string> listed;
  for (Dtype d : unit.dtypes) listed.push_back(to_string(d));

  if (unit.kind == MatrixKind::cube) {
    const YAML::Node shapes = r.require(m, path, "shapes");
    r.require_map(shapes, "matrix.shapes");
    for (const auto& kv : shapes) {
      const std::string key = kv.first.Scalar();
      const std::string p = "matrix.shapes." + key;
      Dtype d{};
      bool known = false;
      for (const auto& [value, name] : kDtypes)
        if (key == name) d = value, known = true;
      if (!known) r.fail(p, fmt::format("unknown dtype (must be {})", one_of(names_of(kDtypes))));
      if (!unit.supports(d))
        r.fail(p, fmt::format("dtype {} is not in matrix.dtypes [{}]; add it there or remove this shape", key,
                              join(listed, ", ")));
      if (unit.shapes.count(d)) r.fail(p, "duplicate key");
      const YAML::Node s = kv.second;
      r.require_map(s, p);
      r.check_keys(s, p, {"m0", "k0", "n0"});
      CubeShape shape;
      shape.m0 = r.matrix_extent(r.require(s, p, "m0"), p + ".m0");
      shape.k0 = r.matrix_extent(r.require(s, p, "k0"), p + ".k0");
      shape.n0 = r.matrix_extent(r.require(s, p, "n0"), p + ".n0");
      unit.shapes[d] = shape;
    }
    for (Dtype d : unit.dtypes)
      if (!unit.shapes.count(d))
        r.fail(fmt::format("matrix.shapes.{}", to_string(d)),
               fmt::format("missing (required: {} is in matrix.dtypes)", to_string(d)));
    if (const YAML::Node layout = m["layout"]) {
      unit.layout = r.choice(layout, "matrix.layout", kLayouts);
      // An NZ fractal is 16 rows of 32 bytes (layouts/nz.h): the cube's shape for each
      // dtype must be that fractal, or the staged tiles would not be what it reads.
      for (const auto& [d, shape] : unit.shapes) {
        if (unit.layout != OperandLayout::nz) break;
        if (shape.m0 != 16 || shape.k0 * dtype_bytes(d) != 32)
          r.fail("matrix.layout", layout,
                 fmt::format("NZ fractals are 16 rows x 32 B, but matrix.shapes.{} is m0 = {}, k0 = {} ({} B); "
                             "use layout nd or m0 = 16, k0 = {}",
                             to_string(d), shape.m0, shape.k0, shape.k0 * dtype_bytes(d), 32 / dtype_bytes(d)),
                 false);
      }
    }
  } else {
    unit.rows = r.matrix_extent(r.require(m, path, "rows"), "matrix.rows");
    unit.cols = r.matrix_extent(r.require(m, path, "cols"), "matrix.cols");
    unit.dataflow = r.choice(r.require(m, path, "dataflow"), "matrix.dataflow", kDataflows);
  }
  return unit;
}

VectorUnit read_vector(const Reader& r, const YAML::Node& v) {
  const std::string path = "vector";
  r.require_map(v, path);
  r.check_keys(v, path, {"bytes_per_cycle", "cycles"});
  VectorUnit unit;
  unit.bytes_per_cycle =
      r.positive_number(r.require(v, path, "bytes_per_cycle"), "vector.bytes_per_cycle");
  const YAML::Node cycles = r.require(v, path, "cycles");
  r.require_map(cycles, "vector.cycles");
  r.check_keys(cycles, "vector.cycles", names_of(kVectorOps));
  for (const auto& [op, name] : kVectorOps)
    unit.cycles[op] = r.positive_number(r.require(cycles, "vector.cycles", name),
                                        std::string("vector.cycles.") + name);
  return unit;
}

BufferRoles read_roles(const Reader& r, const YAML::Node& node, const std::vector<Buffer>& buffers) {
  // Defaults: the first buffer a unit reads; the accumulator is the last matrix-read one.
  auto first_read_by = [&](Unit u, bool last) {
    std::string name;
    for (const Buffer& b : buffers)
      if (b.read_by(u) && (name.empty() || last)) name = b.name;
    return name;
  };
  BufferRoles roles{first_read_by(Unit::matrix, false), first_read_by(Unit::matrix, false),
                    first_read_by(Unit::matrix, true), first_read_by(Unit::vector, false)};
  if (!node) return roles;
  r.require_map(node, "roles");
  r.check_keys(node, "roles", {"matrix_a", "matrix_b", "matrix_acc", "vector"});
  std::vector<std::string> names;
  for (const Buffer& b : buffers) names.push_back(b.name);
  auto read = [&](const char* key, std::string& out) {
    if (!node[key]) return;
    const std::string path = std::string("roles.") + key;
    out = r.text(node[key], path);
    if (std::find(names.begin(), names.end(), out) == names.end())
      r.fail(path, node[key], "names no buffer (buffers: " + join(names, ", ") + ")", false);
  };
  read("matrix_a", roles.matrix_a);
  read("matrix_b", roles.matrix_b);
  read("matrix_acc", roles.matrix_acc);
  read("vector", roles.vector);
  return roles;
}

std::vector<Buffer> read_buffers(const Reader& r, const YAML::Node& list) {
  r.require_list(list, "buffers", "buffer");
  std::vector<Buffer> out;
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string p = Reader::item("buffers", i);
    const YAML::Node b = list[i];
    r.require_map(b, p);
    r.check_keys(b, p, {"name", "bytes", "alignment", "banks", "readers"});
    Buffer buf;
    buf.name = r.text(r.require(b, p, "name"), p + ".name");
    for (size_t j = 0; j < out.size(); ++j)
      if (out[j].name == buf.name)
        r.fail(p + ".name", b["name"],
               fmt::format("duplicate buffer name (buffers[{}] has it)", j), false);
    buf.bytes = r.positive_integer(r.require(b, p, "bytes"), p + ".bytes");
    buf.alignment = r.power_of_two(r.require(b, p, "alignment"), p + ".alignment");
    buf.banks = r.positive_integer(r.require(b, p, "banks"), p + ".banks");
    const YAML::Node readers = r.require(b, p, "readers");
    r.require_list(readers, p + ".readers", "reader");
    for (size_t j = 0; j < readers.size(); ++j) {
      const std::string rp = Reader::item(p + ".readers", j);
      Unit u = r.choice(readers[j], rp, kUnits);
      if (buf.read_by(u)) r.fail(rp, readers[j], "duplicate reader", false);
      buf.readers.push_back(u);
    }
    out.push_back(std::move(buf));
  }
  return out;
}

std::vector<DmaEngine> read_dma(const Reader& r, const YAML::Node& list) {
  r.require_list(list, "dma", "DMA engine");
  std::vector<DmaEngine> out;
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string p = Reader::item("dma", i);
    const YAML::Node d = list[i];
    r.require_map(d, p);
    r.check_keys(d, p, {"name", "bytes_per_cycle", "setup_cycles", "burst_bytes", "alignment", "direction", "partial_writes"});
    DmaEngine e;
    e.name = r.text(r.require(d, p, "name"), p + ".name");
    for (size_t j = 0; j < out.size(); ++j)
      if (out[j].name == e.name)
        r.fail(p + ".name", d["name"],
               fmt::format("duplicate dma name (dma[{}] has it)", j), false);
    e.bytes_per_cycle =
        r.positive_number(r.require(d, p, "bytes_per_cycle"), p + ".bytes_per_cycle");
    e.setup_cycles =
        r.non_negative_integer(r.require(d, p, "setup_cycles"), p + ".setup_cycles");
    e.burst_bytes = r.positive_integer(r.require(d, p, "burst_bytes"), p + ".burst_bytes");
    e.alignment = r.power_of_two(r.require(d, p, "alignment"), p + ".alignment");
    if (d["direction"]) {
      e.direction = r.choice(d["direction"], p + ".direction", kDmaDirections);
      e.direction_given = true;
    }
    if (d["partial_writes"]) {
      e.partial_writes = r.boolean(d["partial_writes"], p + ".partial_writes");
      if (e.partial_writes && e.direction_given && e.direction == DmaDirection::in)
        r.fail(p + ".partial_writes", d["partial_writes"], "an engine with direction: in writes nothing to DRAM", false);
    }
    out.push_back(std::move(e));
  }
  return out;
}

Dram read_dram(const Reader& r, const YAML::Node& d) {
  r.require_map(d, "dram");
  r.check_keys(d, "dram", {"bandwidth_gbps", "latency_ns", "bytes"});
  Dram dram;
  // Optional: the cost model never reads it; the decode planner's memory plan does. The
  // integer reader's 2^40 bound (1 TiB) is far above any accelerator's DRAM and keeps the
  // planner's sums of it exact.
  if (d["bytes"]) dram.bytes = r.positive_integer(d["bytes"], "dram.bytes");
  dram.bandwidth_gbps =
      r.positive_number(r.require(d, "dram", "bandwidth_gbps"), "dram.bandwidth_gbps");
  dram.latency_ns =
      r.non_negative_number(r.require(d, "dram", "latency_ns"), "dram.latency_ns");
  return dram;
}

std::string format_bytes(int64_t b) {
  if (b >= (1 << 20) && b % (1 << 20) == 0) return fmt::format("{} MiB", b >> 20);
  if (b >= 1024 && b % 1024 == 0) return fmt::format("{} KiB", b >> 10);
  return fmt::format("{} B", b);
}

std::string format_rate(double ops, bool integer_dtype) {
  const char* unit = integer_dtype ? "OPS" : "FLOPS";
  return ops >= 1e12 ? fmt::format("{:.2f} T{}", ops / 1e12, unit) : fmt::format("{:.1f} G{}", ops / 1e9, unit);
}

// The installed presets beside the running program (bin/../share/npukit/presets), so that
// an installed or moved tree needs no source tree; else the source tree's.
// Looked up once per process.
const std::string& preset_dir() {
  static const std::string dir = [] {
    std::error_code ec;
    const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (!ec) {
      const std::filesystem::path installed = exe.parent_path() / NPUKIT_INSTALLED_PRESET_DIR;
      if (std::filesystem::is_directory(installed, ec)) return installed.lexically_normal().string();
    }
    return std::string(NPUKIT_ARCH_PRESET_DIR);
  }();
  return dir;
}

bool looks_like_path(const std::string& s) {
  auto ends_with = [&](const std::string& suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  return s.find('/') != std::string::npos || ends_with(".yaml") || ends_with(".yml");
}

}  // namespace

const char* to_string(Dtype d) { return name_of(kDtypes, d); }
const char* to_string(MatrixKind k) { return name_of(kKinds, k); }
const char* to_string(OperandLayout l) { return name_of(kLayouts, l); }
const char* to_string(Dataflow d) { return name_of(kDataflows, d); }
const char* to_string(Unit u) { return name_of(kUnits, u); }
const char* to_string(DmaDirection d) { return name_of(kDmaDirections, d); }
const char* to_string(VectorOp op) { return name_of(kVectorOps, op); }

bool MatrixUnit::supports(Dtype d) const {
  return std::find(dtypes.begin(), dtypes.end(), d) != dtypes.end();
}

int64_t MatrixUnit::macs_per_cycle(Dtype d) const {
  if (!supports(d)) return 0;
  if (kind == MatrixKind::systolic) return rows * cols;
  auto it = shapes.find(d);
  return it == shapes.end() ? 0 : it->second.macs();
}

bool Buffer::read_by(Unit u) const {
  return std::find(readers.begin(), readers.end(), u) != readers.end();
}

const Buffer* ArchSpec::find_buffer(const std::string& n) const {
  for (const auto& b : buffers)
    if (b.name == n) return &b;
  return nullptr;
}

const DmaEngine* ArchSpec::find_dma(const std::string& n) const {
  for (const auto& d : dma)
    if (d.name == n) return &d;
  return nullptr;
}

const DmaEngine& ArchSpec::dma_for(DmaDirection want) const {
  if (dma.empty()) throw std::invalid_argument(message("arch {}: no DMA engine to carry transfers", name));
  const char* what = want == DmaDirection::in ? "loads (direction in or both)" : "stores (direction out or both)";
  for (const DmaEngine& e : dma)
    if (e.direction_given && (e.direction == want || e.direction == DmaDirection::both)) return e;
  for (const DmaEngine& e : dma)
    if (e.direction_given) throw std::invalid_argument(message("arch {}: no DMA engine carries {}", name, what));
  if (want == DmaDirection::out && dma.size() > 1) return dma[1];
  return dma[0];
}

double ArchSpec::peak_ops_per_second(Dtype d) const {
  return static_cast<double>(matrix.macs_per_cycle(d)) * 2.0 * clock_ghz * 1e9 *
         static_cast<double>(cores);
}

double ArchSpec::dram_bytes_per_cycle_per_core() const {
  return dram.bandwidth_gbps / clock_ghz / static_cast<double>(cores);
}

ArchSpec parse_arch_spec(const std::string& yaml_text, const std::string& origin) {
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::Exception& e) {
    if (e.mark.is_null()) throw std::runtime_error(message("{}: malformed YAML: {}", origin, e.msg));
    throw std::runtime_error(
        message("{}: malformed YAML at line {}, column {}: {}", origin, e.mark.line + 1, e.mark.column + 1, e.msg));
  }
  const Reader r(origin);
  if (!root.IsDefined() || root.IsNull()) r.fail("(top level)", "empty document (expected a mapping with name, clock_ghz, cores, matrix, vector, buffers, dma, dram)");
  r.require_map(root, "");
  r.check_keys(root, "", {"name", "source", "clock_ghz", "cores", "matrix", "vector",
                          "buffers", "dma", "dram", "roles", "sync_cycles"});
  ArchSpec spec;
  spec.origin = origin;
  spec.name = r.text(r.require(root, "", "name"), "name");
  if (root["source"]) spec.source = r.text(root["source"], "source");
  spec.clock_ghz = r.positive_number(r.require(root, "", "clock_ghz"), "clock_ghz", 100, "must be <= 100 (GHz)");
  spec.cores = r.positive_integer(r.require(root, "", "cores"), "cores");
  spec.matrix = read_matrix(r, r.require(root, "", "matrix"));
  spec.vector = read_vector(r, r.require(root, "", "vector"));
  spec.buffers = read_buffers(r, r.require(root, "", "buffers"));
  spec.dma = read_dma(r, r.require(root, "", "dma"));
  // With directions given, loads and stores must each have an engine.
  bool any_given = false, loads = false, stores = false;
  for (const DmaEngine& e : spec.dma) {
    any_given = any_given || e.direction_given;
    loads = loads || (e.direction_given && e.direction != DmaDirection::out);
    stores = stores || (e.direction_given && e.direction != DmaDirection::in);
  }
  if (any_given && (!loads || !stores))
    r.fail("dma", fmt::format("no engine carries {} (give one direction: {} or both)", loads ? "stores" : "loads",
                              loads ? "out" : "in"));
  spec.dram = read_dram(r, r.require(root, "", "dram"));
  spec.roles = read_roles(r, root["roles"], spec.buffers);
  if (root["sync_cycles"]) {
    spec.sync_cycles = r.non_negative_integer(root["sync_cycles"], "sync_cycles");
    spec.sync_cycles_given = true;
  }
  return spec;
}

ArchSpec load_arch_spec(const std::string& path) {
  // Bounded and a regular file: a spec is a few KiB, and a directory opens "fine" and reads
  // as an empty document.
  const uint64_t limit = byte_limit("NPUKIT_MAX_SPEC_BYTES", uint64_t(1) << 20);
  const std::string rule = fmt::format("an architecture spec may have up to {} (NPUKIT_MAX_SPEC_BYTES)",
                                       format_bytes(static_cast<int64_t>(std::min<uint64_t>(limit, INT64_MAX))));
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw std::runtime_error(message("{}: is a directory; an architecture is a preset name or a YAML file", path));
  }
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  if (!ec && size > limit) throw std::runtime_error(message("{}: {} bytes; {}", path, size, rule));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(message("{}: cannot open ({})", path, std::strerror(errno)));
  // A pipe or a device has no size to check first: read in chunks, at most the limit.
  std::string text;
  char chunk[1 << 16];
  while (in.read(chunk, sizeof chunk) || in.gcount() > 0) {
    text.append(chunk, static_cast<size_t>(in.gcount()));
    if (text.size() > limit) throw std::runtime_error(message("{}: longer than the limit; {}", path, rule));
  }
  return parse_arch_spec(text, path);
}

std::string arch_summary(const ArchSpec& s) {
  std::string out;
  append(out, "{}: {} {} at {} GHz\n", s.name, s.cores, s.cores == 1 ? "core" : "cores", format_double(s.clock_ghz));
  append(out, "  matrix: {}", to_string(s.matrix.kind));
  if (s.matrix.kind == MatrixKind::systolic)
    append(out, " {}x{} {}", s.matrix.rows, s.matrix.cols, to_string(s.matrix.dataflow));
  out += ";";
  for (Dtype d : s.matrix.dtypes) {
    append(out, " {}", to_string(d));
    if (s.matrix.kind == MatrixKind::cube) {
      const CubeShape& c = s.matrix.shapes.at(d);
      append(out, " {}x{}x{}", c.m0, c.k0, c.n0);
    }
    append(out, " {} MAC/cycle/core = {}{}", s.matrix.macs_per_cycle(d),
        format_rate(s.peak_ops_per_second(d), d == Dtype::int8 || d == Dtype::int32 || d == Dtype::int4),
        d == s.matrix.dtypes.back() ? "" : ",");
  }
  if (s.matrix.layout == OperandLayout::nz) out += "; operands staged in NZ fractals (16 rows x 32 B)";
  append(out, "\n  vector: {} B/cycle\n", format_double(s.vector.bytes_per_cycle));
  out += "  buffers:";
  for (const auto& b : s.buffers) {
    std::vector<std::string> readers;
    for (Unit u : b.readers) readers.push_back(to_string(u));
    append(out, " {} {} (align {}, {} {}; {}){}", b.name, format_bytes(b.bytes), b.alignment, b.banks,
        b.banks == 1 ? "bank" : "banks", join(readers, "/"), &b == &s.buffers.back() ? "" : ",");
  }
  out += "\n  dma:";
  for (const auto& d : s.dma)
    append(out, " {} {} B/cycle (setup {}, burst {}, align {}{}){}", d.name, format_double(d.bytes_per_cycle), d.setup_cycles,
        d.burst_bytes, d.alignment, d.partial_writes ? ", partial writes" : "", &d == &s.dma.back() ? "" : ",");
  append(out, "\n  dram: {} GB/s, {} ns ({} B/cycle per core{})\n", format_double(s.dram.bandwidth_gbps),
      format_double(s.dram.latency_ns), format_double(s.dram_bytes_per_cycle_per_core()),
      s.dram.bytes > 0 ? ", " + format_bytes(s.dram.bytes) : std::string());
  if (!s.source.empty()) append(out, "  source: {}\n", s.source);
  return out;
}

namespace {
std::vector<std::string> yaml_stems(const std::string& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec))
    if (entry.is_regular_file() && entry.path().extension() == ".yaml")
      names.push_back(entry.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}
}  // namespace

std::vector<std::string> preset_names() { return yaml_stems(preset_dir()); }

std::vector<std::string> host_preset_names() { return yaml_stems(preset_dir() + "/host"); }

const ArchSpec& preset(const std::string& name) {
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<ArchSpec>> cache;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = cache.find(name);
  if (it != cache.end()) return *it->second;
  std::vector<std::string> names = preset_names();
  const std::vector<std::string> hosts = host_preset_names();
  std::string file = preset_dir() + "/" + name + ".yaml";
  if (std::find(hosts.begin(), hosts.end(), name) != hosts.end()) file = preset_dir() + "/host/" + name + ".yaml";
  const std::vector<std::string> npus = names;
  names.insert(names.end(), hosts.begin(), hosts.end());
  if (std::find(names.begin(), names.end(), name) == names.end()) {
    std::string msg = "arch '" + name + "': unknown preset";
    std::string guess = closest_name(name, names);
    if (!guess.empty()) msg += " (did you mean " + guess + "?)";
    msg += "; presets: " + join(npus, ", ") + (hosts.empty() ? "" : "; host presets: " + join(hosts, ", ")) +
           "; or give a path to a .yaml file";
    throw std::runtime_error(msg);
  }
  auto spec = std::make_unique<ArchSpec>(load_arch_spec(file));
  return *cache.emplace(name, std::move(spec)).first->second;
}

ArchSpec resolve_arch(const std::string& name_or_path) {
  if (looks_like_path(name_or_path)) return load_arch_spec(name_or_path);
  return preset(name_or_path);
}

}  // namespace npukit::sim
