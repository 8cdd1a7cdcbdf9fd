// The .npy format: https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html
// A file is the magic "\x93NUMPY", a version byte pair, a little-endian header length
// (2 bytes in 1.0, 4 in 2.0/3.0), a Python dict literal padded with spaces and '\n' so the
// data starts on a 64-byte boundary, then the raw array bytes.
#include "tools/npy.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <memory>
#include <stdexcept>

#include "runtime/byte_limit.h"
#include "runtime/message.h"

namespace npukit::npy {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;
// numpy's ARRAY_ALIGN: the header is padded so the data can be memory-mapped aligned.
constexpr size_t kAlign = 64;
// numpy's GROWTH_AXIS_MAX_DIGITS: np.save leaves room after the dict so that the first
// dimension can later grow in place; we match it so our files are byte-identical.
constexpr size_t kGrowthDigits = 21;

constexpr const char* kHeaderRule =
    "a .npy header is a Python dict {'descr': str, 'fortran_order': bool, "
    "'shape': tuple of int}";

// Keys and dtype strings from the header are echoed in messages (runtime/text.h: one_line).
[[noreturn]] void fail(const std::string& what, const std::string& msg) {
  throw std::runtime_error(message("{}: {}", what, msg));
}

// The descr numpy writes for each DType; one-byte types have no byte order ('|').
struct DescrEntry {
  DType dtype;
  const char* descr;
};
constexpr DescrEntry kDescrs[] = {
    {DType::float32, "<f4"}, {DType::float16, "<f2"}, {DType::float64, "<f8"},
    {DType::int8, "|i1"},    {DType::uint8, "|u1"},   {DType::int32, "<i4"},
    {DType::int64, "<i8"},
};

std::string descr_of(DType t) {
  for (const DescrEntry& e : kDescrs)
    if (e.dtype == t) return e.descr;
  return "?";
}

std::string supported_list() {
  std::string s;
  for (const DescrEntry& e : kDescrs) {
    if (!s.empty()) s += ", ";
    s += std::string(dtype_name(e.dtype)) + " '" + e.descr + "'";
  }
  return s;
}

std::string shape_repr(const std::vector<int64_t>& shape) {
  // Python's repr of a tuple: (), (5,), (2, 3, 4).
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + (shape.size() == 1 ? ",)" : ")");
}

DType dtype_from_descr(const std::string& descr, const std::string& what) {
  char order = 0;
  std::string body = descr;  // kind and item size, e.g. "f4"
  if (!descr.empty() && std::strchr("<>=|", descr[0]) != nullptr) {
    order = descr[0];
    body = descr.substr(1);
  }
  for (const DescrEntry& e : kDescrs) {
    if (body != e.descr + 1) continue;
    // Byte order means nothing for one byte, so any marker is fine there.
    if (dtype_size(e.dtype) == 1 || order == '<') return e.dtype;
    const std::string fix = " (save with arr.astype('<" + body + "'))";
    if (order == '>')
      fail(what, fmt::format("dtype '{}' is big-endian; npukit reads little-endian .npy only{}", descr, fix));
    // '=' (native) or no marker: the writer's byte order is unknown to us.
    fail(what,
         fmt::format("dtype '{}' does not say little-endian; npukit reads little-endian .npy only{}", descr, fix));
  }
  fail(what, fmt::format("dtype '{}' is not supported; npukit reads {} (convert with arr.astype(...))", descr,
                         supported_list()));
}

// Parses the header dict. Python literal syntax, but only what a .npy header can hold:
// quoted keys, a quoted descr, True/False, a tuple of non-negative ints.
class HeaderParser {
 public:
  HeaderParser(const std::string& text, const std::string& what) : s_(text), what_(what) {}

  void parse(std::string& descr, bool& fortran_order, std::vector<int64_t>& shape) {
    bool have_descr = false, have_fortran = false, have_shape = false;
    skip_ws();
    if (!eat('{')) bad("the header does not start with '{'");
    for (;;) {
      skip_ws();
      if (eat('}')) break;
      const std::string key = parse_string("a quoted key or '}'");
      skip_ws();
      if (!eat(':')) bad("expected ':' after key '" + key + "'");
      skip_ws();
      key_ = key;
      if (key == "descr") {
        if (have_descr) bad("duplicate key 'descr'");
        if (peek() == '[')  // a valid header, just not an array type we compute on
          fail(what_, fmt::format("dtype is structured (a list of fields); npukit reads plain arrays of {} (save each "
                                  "field as its own .npy)",
                                  supported_list()));
        descr = parse_string("a dtype string like '<f4'");
        have_descr = true;
      } else if (key == "fortran_order") {
        if (have_fortran) bad("duplicate key 'fortran_order'");
        fortran_order = parse_bool();
        have_fortran = true;
      } else if (key == "shape") {
        if (have_shape) bad("duplicate key 'shape'");
        shape = parse_shape();
        have_shape = true;
      } else {
        bad("unknown key '" + key + "'");
      }
      key_.clear();
      skip_ws();
      if (eat(',')) continue;
      if (eat('}')) break;
      bad("expected ',' or '}' after the value of '" + key + "'");
    }
    skip_ws();
    if (pos_ != s_.size()) bad("text after the closing '}'");
    if (!have_descr) bad("no 'descr' key");
    if (!have_fortran) bad("no 'fortran_order' key");
    if (!have_shape) bad("no 'shape' key");
  }

 private:
  [[noreturn]] void bad(const std::string& problem) const {
    std::string msg = "malformed .npy header: " + problem;
    std::string near = printable(s_.substr(pos_, 24));
    near.erase(near.find_last_not_of(' ') + 1);  // the header's padding says nothing
    if (!near.empty()) msg += " near \"" + near + "\"";
    fail(what_, fmt::format("{}; {}", msg, kHeaderRule));
  }

  // Keeps the message on one line whatever bytes the header holds.
  static std::string printable(const std::string& s) {
    std::string out;
    for (char c : s) {
      if (c == '\n' || c == '\r' || c == '\t') c = ' ';
      out += (c >= 0x20 && c < 0x7f) ? c : '?';
    }
    return out;
  }

  char peek() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }
  bool eat(char c) {
    if (peek() != c) return false;
    ++pos_;
    return true;
  }
  void skip_ws() {
    while (pos_ < s_.size() && std::strchr(" \t\r\n", s_[pos_]) != nullptr) ++pos_;
  }
  bool eat_word(const char* w) {
    const size_t n = std::strlen(w);
    if (s_.compare(pos_, n, w) != 0) return false;
    pos_ += n;
    return true;
  }

  // No escape sequences: keys and dtype strings never contain them.
  std::string parse_string(const std::string& expected) {
    const char quote = peek();
    if (quote != '\'' && quote != '"') bad(value_problem(expected));
    const size_t end = s_.find(quote, pos_ + 1);
    if (end == std::string::npos) bad("unterminated string");
    std::string out = s_.substr(pos_ + 1, end - pos_ - 1);
    pos_ = end + 1;
    return out;
  }

  bool parse_bool() {
    if (eat_word("True")) return true;
    if (eat_word("False")) return false;
    bad(value_problem("True or False"));
  }

  // Accepts (), (5,), (2, 3, 4), (2,3,) and also (5); Python 2 writers added an 'L'
  // suffix to ints, which numpy still reads, so we skip it too.
  std::vector<int64_t> parse_shape() {
    const char* expected = "a tuple of non-negative ints like (2, 3)";
    std::vector<int64_t> shape;
    if (!eat('(')) bad(value_problem(expected));
    for (;;) {
      skip_ws();
      if (eat(')')) return shape;
      if (peek() < '0' || peek() > '9') bad(value_problem(expected));
      int64_t v = 0;
      while (peek() >= '0' && peek() <= '9') {
        const int d = s_[pos_++] - '0';
        if (v > (std::numeric_limits<int64_t>::max() - d) / 10)
          bad("'shape' has a dimension too large for int64");
        v = v * 10 + d;
      }
      eat('L');
      shape.push_back(v);
      skip_ws();
      if (eat(',')) continue;
      if (eat(')')) return shape;
      bad(value_problem(expected));
    }
  }

  std::string value_problem(const std::string& expected) const {
    return key_.empty() ? "expected " + expected : "'" + key_ + "' must be " + expected;
  }

  const std::string& s_;
  const std::string& what_;
  size_t pos_ = 0;
  std::string key_;  // the key whose value is being parsed, for messages
};

uint32_t read_le(const uint8_t* p, size_t n) {
  uint32_t v = 0;
  for (size_t i = 0; i < n; ++i) v |= uint32_t(p[i]) << (8 * i);
  return v;
}

// Element count, or -1 when it overflows int64.
int64_t checked_product(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) return -1;
    if (d != 0 && n > std::numeric_limits<int64_t>::max() / d) return -1;
    n *= d;
  }
  return n;
}

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

}  // namespace

int64_t NpyArray::size() const { return checked_product(shape); }

NpyArray parse(const std::vector<uint8_t>& file_bytes, const std::string& what) {
  const size_t n = file_bytes.size();
  const uint8_t* b = file_bytes.data();
  if (n < kMagicLen || std::memcmp(b, kMagic, kMagicLen) != 0)
    fail(what, "not a .npy file (bad magic); a .npy file starts with \\x93NUMPY");
  if (n < kMagicLen + 2) fail(what, "file ends inside the .npy header");
  const int major = b[6], minor = b[7];
  if (minor != 0 || major < 1 || major > 3)
    fail(what, fmt::format(".npy format version {}.{} is not supported; npukit reads 1.0, 2.0 and 3.0", major, minor));
  // 1.0 stores the header length in 2 bytes; 2.0 and 3.0 (utf-8 header) use 4.
  const size_t len_bytes = major == 1 ? 2 : 4;
  const size_t header_start = kMagicLen + 2 + len_bytes;
  if (n < header_start) fail(what, "file ends inside the .npy header");
  const size_t header_len = read_le(b + kMagicLen + 2, len_bytes);
  if (n - header_start < header_len)
    fail(what, fmt::format("header length is {} bytes but the file holds {} after the prefix; the file is truncated",
                           header_len, n - header_start));

  const std::string header(reinterpret_cast<const char*>(b + header_start), header_len);
  std::string descr;
  bool fortran_order = false;
  NpyArray out;
  HeaderParser(header, what).parse(descr, fortran_order, out.shape);
  out.dtype = dtype_from_descr(descr, what);
  if (fortran_order)
    fail(what, "fortran_order is True; npukit needs C order (np.ascontiguousarray)");

  const int64_t count = out.size();
  const size_t item = dtype_size(out.dtype);
  const size_t have = n - header_start - header_len;
  if (count < 0 || uint64_t(count) > std::numeric_limits<size_t>::max() / item)
    fail(what, fmt::format("shape {} has more elements than memory can hold", shape_repr(out.shape)));
  const size_t want = size_t(count) * item;
  if (want != have)
    fail(what, fmt::format("header says {} bytes of data but the file holds {}{}", want, have,
                           (have < want ? "; the file is truncated"
                                        : "; npukit reads one array per .npy file and nothing after it")));
  out.bytes.assign(b + header_start + header_len, b + n);
  return out;
}

uint64_t max_file_bytes() { return byte_limit("NPUKIT_MAX_NPY_BYTES", uint64_t(4) << 30); }

NpyArray read(const std::string& path) {
  errno = 0;
  std::unique_ptr<std::FILE, FileCloser> f(std::fopen(path.c_str(), "rb"));
  if (!f) {
    if (errno == ENOENT) fail(path, "no such file");
    fail(path, fmt::format("cannot open for reading ({})", std::strerror(errno)));
  }
  // Bounded: a device or pipe (/dev/zero) would otherwise be read until memory runs out.
  const uint64_t limit = max_file_bytes();
  std::vector<uint8_t> bytes;
  constexpr size_t kChunk = 1 << 20;
  for (;;) {
    const size_t old = bytes.size();
    bytes.resize(old + kChunk);
    const size_t got = std::fread(bytes.data() + old, 1, kChunk, f.get());
    bytes.resize(old + got);
    if (old == 0 && (got < kMagicLen || std::memcmp(bytes.data(), kMagic, kMagicLen) != 0)) break;  // parse says why
    if (bytes.size() > limit) {
      fail(path, fmt::format("larger than {} bytes, the limit for a .npy input (NPUKIT_MAX_NPY_BYTES)", limit));
    }
    if (got < kChunk) break;
  }
  // A directory opens fine on Linux and fails here with EISDIR.
  if (std::ferror(f.get())) fail(path, fmt::format("cannot read ({})", std::strerror(errno)));
  return parse(bytes, path);
}

void write(const std::string& path, const NpyArray& array) {
  const int64_t count = array.size();
  if (count < 0)
    fail(path, fmt::format("cannot write shape {}; dimensions must be non-negative and their product fit in int64",
                           shape_repr(array.shape)));
  const size_t item = dtype_size(array.dtype);
  if (uint64_t(count) * item != array.bytes.size())
    fail(path, fmt::format("array holds {} bytes but shape {} of {} needs {}; nothing written", array.bytes.size(),
                           shape_repr(array.shape), dtype_name(array.dtype), uint64_t(count) * item));

  // Exactly numpy's _write_array_header: sorted keys, repr values, a trailing ", ".
  std::string header = "{'descr': '" + descr_of(array.dtype) +
                       "', 'fortran_order': False, 'shape': " + shape_repr(array.shape) + ", }";
  if (!array.shape.empty())
    header.append(kGrowthDigits - std::to_string(array.shape[0]).size(), ' ');
  // numpy pads with at least one space (a full kAlign when already aligned), then '\n'.
  auto padded_len = [&](size_t prefix) {
    const size_t hlen = header.size() + 1;
    return hlen + (kAlign - (prefix + hlen) % kAlign);
  };
  int major = 1;
  size_t len_bytes = 2;
  size_t total = padded_len(kMagicLen + 2 + len_bytes);
  if (total > 0xFFFF) {  // does not fit 1.0's 2-byte length
    major = 2;
    len_bytes = 4;
    total = padded_len(kMagicLen + 2 + len_bytes);
  }
  header.resize(total - 1, ' ');
  header += '\n';

  std::string prefix(kMagic, kMagicLen);
  prefix += char(major);
  prefix += char(0);
  for (size_t i = 0; i < len_bytes; ++i) prefix += char((total >> (8 * i)) & 0xFF);

  errno = 0;
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) fail(path, fmt::format("cannot open for writing ({})", std::strerror(errno)));
  bool ok = std::fwrite(prefix.data(), 1, prefix.size(), f) == prefix.size() &&
            std::fwrite(header.data(), 1, header.size(), f) == header.size() &&
            (array.bytes.empty() ||  // data() may be null, which fwrite must not see
             std::fwrite(array.bytes.data(), 1, array.bytes.size(), f) == array.bytes.size());
  const int err = errno;
  ok = (std::fclose(f) == 0) && ok;  // fclose flushes: a full disk may only show here
  if (!ok) {
    // A truncated .npy would fail later with a less helpful message; leave nothing.
    // Only a regular file: run as root, removing /dev/full would delete the device node.
    std::error_code ec;
    if (std::filesystem::is_regular_file(path, ec)) std::remove(path.c_str());
    fail(path, fmt::format("cannot write ({})", std::strerror(err ? err : errno)));
  }
}

}  // namespace npukit::npy
