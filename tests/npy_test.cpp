// Tests for tools/npy: round trips, every refusal message, and both directions against
// real numpy, the format's reference. The numpy tests skip (not fail) where
// /usr/bin/python3 has no numpy, so the suite passes on a machine without it.
#include "tools/npy.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace {

namespace fs = std::filesystem;
namespace npy = npukit::npy;
using npukit::DType;
using npy::NpyArray;

// numpy's descr for each DType, written out here so the test does not trust the table
// in npy.cpp.
const std::vector<std::pair<DType, std::string>> kDescrs = {
    {DType::float32, "<f4"}, {DType::float16, "<f2"}, {DType::float64, "<f8"},
    {DType::int8, "|i1"},    {DType::uint8, "|u1"},   {DType::int32, "<i4"},
    {DType::int64, "<i8"},
};

// The shapes every dtype is tried with, by the tag used in file names (same in kPyCases).
// "long" makes numpy's header end exactly on a 64-byte boundary, where numpy still pads a
// full 64 bytes, and without numpy's 19 spare spaces it would fit in one block less: the
// short shapes alone would hide a mistake in either rule.
const std::vector<std::pair<std::string, std::vector<int64_t>>> kShapes = {
    {"scalar", {}},
    {"empty", {0}},
    {"vec", {5}},
    {"cube", {2, 3, 4}},
    {"long", {1, 100, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}}};

// The same cases for the numpy side: `for dt, tag, want in cases():` yields each array
// that npukit's make_array() builds.
const char* const kPyCases = R"(
import io, sys
import numpy as np
d = sys.argv[1]
def cases():
    for dt in ["<f4", "<f2", "<f8", "|i1", "|u1", "<i4", "<i8"]:
        for tag, shape in [("scalar", ()), ("empty", (0,)), ("vec", (5,)), ("cube", (2, 3, 4)),
                           ("long", (1, 100) + (1,) * 12)]:
            n = int(np.prod(shape))
            base = np.arange(n) * 10 % 256 if dt == "|u1" else np.arange(n) - 5
            yield dt, tag, base.astype(dt).reshape(shape)
)";

// Half-precision bits of v, which must be zero or exactly a normal half.
uint16_t half_bits(double v) {
  const uint16_t sign = std::signbit(v) ? 0x8000 : 0;
  if (v == 0) return sign;
  int e = 0;
  const double m = std::frexp(std::fabs(v), &e);  // |v| = m * 2^e, m in [0.5, 1)
  return uint16_t(sign | ((e + 14) << 10) | int((m * 2 - 1) * 1024));
}

void put_le(std::vector<uint8_t>& out, uint64_t v, size_t n) {
  for (size_t i = 0; i < n; ++i) out.push_back(uint8_t(v >> (8 * i)));
}

// Little-endian bytes of `values` as type t, built without relying on host byte order.
std::vector<uint8_t> encode(DType t, const std::vector<double>& values) {
  std::vector<uint8_t> out;
  for (double v : values) {
    if (t == DType::float32) {
      const float f = float(v);
      uint32_t u = 0;
      std::memcpy(&u, &f, 4);
      put_le(out, u, 4);
    } else if (t == DType::float64) {
      uint64_t u = 0;
      std::memcpy(&u, &v, 8);
      put_le(out, u, 8);
    } else if (t == DType::float16) {
      put_le(out, half_bits(v), 2);
    } else {  // integers: two's complement, truncated to the item size
      put_le(out, uint64_t(int64_t(v)), npukit::dtype_size(t));
    }
  }
  return out;
}

int64_t count(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

// arange(n) - 5, or arange(n) * 10 % 256 for uint8: the values kPyCases uses.
NpyArray make_array(DType t, const std::vector<int64_t>& shape) {
  std::vector<double> values;
  for (int64_t i = 0; i < count(shape); ++i)
    values.push_back(t == DType::uint8 ? double(i * 10 % 256) : double(i - 5));
  return NpyArray{t, shape, encode(t, values)};
}

// A .npy file around `dict`, padded the way numpy pads.
std::vector<uint8_t> make_npy(const std::string& dict, const std::vector<uint8_t>& data,
                              int major = 1) {
  const size_t len_bytes = major == 1 ? 2 : 4;
  std::string header = dict;
  while ((8 + len_bytes + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::vector<uint8_t> out = {0x93, 'N', 'U', 'M', 'P', 'Y', uint8_t(major), 0};
  put_le(out, header.size(), len_bytes);
  out.insert(out.end(), header.begin(), header.end());
  out.insert(out.end(), data.begin(), data.end());
  return out;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "(no exception thrown)";
}

std::string parse_error(const std::string& dict, const std::vector<uint8_t>& data = {}) {
  return error_of([&] { npy::parse(make_npy(dict, data), "x.npy"); });
}

testing::AssertionResult OneLineWith(const std::string& msg, const std::string& part) {
  if (msg.find('\n') != std::string::npos)
    return testing::AssertionFailure() << "message is not one line: " << msg;
  if (msg.find(part) == std::string::npos)
    return testing::AssertionFailure() << "'" << part << "' not in: " << msg;
  return testing::AssertionSuccess();
}

// The interpreter that has numpy; the python3 on PATH is a different one.
const char* const kPython = "/usr/bin/python3";

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// Runs `python -c script arg` and returns its exit code; `cmd` gets the command line so
// that a failure can print it for a repro.
int run_python(const std::string& script, const std::string& arg, std::string* cmd) {
  *cmd = std::string(kPython) + " -c " + shell_quote(script) + " " + shell_quote(arg);
  const int status = std::system(cmd->c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

bool have_numpy() {
  static const bool ok =
      std::system((std::string(kPython) + " -c 'import numpy' 2>/dev/null").c_str()) == 0;
  return ok;
}

class NpyTest : public testing::Test {
 protected:
  void SetUp() override {
    // Unique per process: gtest_discover_tests runs each test in its own process.
    dir_ = fs::temp_directory_path() / ("npukit-npy-test-" + std::to_string(getpid()) + "-" +
                                        std::to_string(std::random_device()()));
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  fs::path dir_;
};

TEST(NpyArray, SizeIsProductOfShapeAndOneForZeroD) {
  EXPECT_EQ((NpyArray{DType::int8, {}, {}}).size(), 1);
  EXPECT_EQ((NpyArray{DType::int8, {0}, {}}).size(), 0);
  EXPECT_EQ((NpyArray{DType::int8, {2, 3, 4}, {}}).size(), 24);
  EXPECT_EQ((NpyArray{DType::int8, {-1}, {}}).size(), -1);
}

TEST_F(NpyTest, RoundTripsEveryDTypeAndShape) {
  for (const auto& [dtype, descr] : kDescrs) {
    for (const auto& [tag, shape] : kShapes) {
      SCOPED_TRACE(descr + " " + tag);
      const NpyArray a = make_array(dtype, shape);
      const std::string p = path(descr.substr(1) + "_" + tag + ".npy");
      npy::write(p, a);
      const NpyArray b = npy::read(p);
      EXPECT_EQ(b.dtype, a.dtype);
      EXPECT_EQ(b.shape, a.shape);
      EXPECT_EQ(b.bytes, a.bytes);
      // The data starts on a 64-byte boundary right after the header's '\n'.
      const size_t header_end = fs::file_size(p) - a.bytes.size();
      EXPECT_EQ(header_end % 64, 0u);
    }
  }
}

TEST_F(NpyTest, WritesVersionTwoWhenHeaderExceeds64K) {
  // Only reachable with ~22000 dimensions; numpy itself caps ndim at 32 (64 in 2.x).
  const NpyArray a = make_array(DType::int32, std::vector<int64_t>(22000, 1));
  const std::string p = path("wide.npy");
  npy::write(p, a);
  const NpyArray b = npy::read(p);
  EXPECT_EQ(b.shape, a.shape);
  EXPECT_EQ(b.bytes, a.bytes);
  std::vector<uint8_t> file(fs::file_size(p));
  std::FILE* f = std::fopen(p.c_str(), "rb");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(std::fread(file.data(), 1, file.size(), f), file.size());
  std::fclose(f);
  EXPECT_EQ(file[6], 2);  // major version
  EXPECT_EQ((file.size() - a.bytes.size()) % 64, 0u);
}

TEST(NpyParse, AcceptsAnyKeyOrderQuotingSpacingAndTrailingCommas) {
  const std::vector<uint8_t> six = encode(DType::uint8, {1, 2, 3, 4, 5, 6});
  const char* const dicts[] = {
      "{'descr': '|u1', 'fortran_order': False, 'shape': (2, 3), }",
      "{'shape': (2, 3), 'fortran_order': False, 'descr': '|u1'}",
      "{\"descr\":\"|u1\",\"fortran_order\":False,\"shape\":(2,3,)}",
      "{ 'descr' : '<u1' , 'fortran_order' : False , 'shape' : ( 2 , 3 ) , }",
      "{'descr': '=u1', 'fortran_order': False, 'shape': (2L, 3L), }",  // Python 2 writer
  };
  for (const char* dict : dicts) {
    SCOPED_TRACE(dict);
    const NpyArray a = npy::parse(make_npy(dict, six), "x.npy");
    EXPECT_EQ(a.dtype, DType::uint8);
    EXPECT_EQ(a.shape, (std::vector<int64_t>{2, 3}));
    EXPECT_EQ(a.bytes, six);
  }
  const NpyArray v = npy::parse(
      make_npy("{'descr': '<i1', 'fortran_order': False, 'shape': (6,)}", six), "x.npy");
  EXPECT_EQ(v.dtype, DType::int8);
  EXPECT_EQ(v.shape, (std::vector<int64_t>{6}));
}

TEST(NpyParse, ReadsVersionsTwoAndThree) {
  const std::vector<uint8_t> data = encode(DType::int64, {7, -7});
  for (int major : {2, 3}) {
    const NpyArray a = npy::parse(
        make_npy("{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }", data, major),
        "x.npy");
    EXPECT_EQ(a.bytes, data);
  }
}

TEST(NpyParse, ZeroDArrayHasEmptyShapeAndOneElement) {
  const std::vector<uint8_t> data = encode(DType::float64, {2.5});
  const NpyArray a = npy::parse(
      make_npy("{'descr': '<f8', 'fortran_order': False, 'shape': (), }", data), "x.npy");
  EXPECT_TRUE(a.shape.empty());
  EXPECT_EQ(a.size(), 1);
  EXPECT_EQ(a.bytes, data);
}

TEST(NpyErrors, BigEndian) {
  EXPECT_EQ(parse_error("{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }",
                        std::vector<uint8_t>(4)),
            "x.npy: dtype '>f4' is big-endian; npukit reads little-endian .npy only "
            "(save with arr.astype('<f4'))");
  EXPECT_TRUE(OneLineWith(parse_error("{'descr': '=i8', 'fortran_order': False, 'shape': (), }",
                                      std::vector<uint8_t>(8)),
                          "x.npy: dtype '=i8' does not say little-endian"));
}

TEST(NpyErrors, FortranOrder) {
  EXPECT_EQ(parse_error("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }",
                        std::vector<uint8_t>(24)),
            "x.npy: fortran_order is True; npukit needs C order (np.ascontiguousarray)");
}

TEST_F(NpyTest, NoSuchFile) {
  const std::string p = path("missing.npy");
  EXPECT_EQ(error_of([&] { npy::read(p); }), p + ": no such file");
}

TEST_F(NpyTest, DirectoryIsNotReadable) {
  EXPECT_TRUE(OneLineWith(error_of([&] { npy::read(dir_.string()); }), ": cannot read ("));
}

TEST(NpyErrors, BadMagic) {
  const std::string text = "hello, this is not numpy";
  const std::vector<uint8_t> bytes(text.begin(), text.end());
  EXPECT_TRUE(OneLineWith(error_of([&] { npy::parse(bytes, "x.npy"); }),
                          "x.npy: not a .npy file (bad magic)"));
  EXPECT_TRUE(OneLineWith(error_of([&] { npy::parse({}, "x.npy"); }),
                          "x.npy: not a .npy file (bad magic)"));
}

TEST(NpyErrors, DataSizeDisagreesWithHeader) {
  const char* dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (10, 30), }";
  EXPECT_TRUE(OneLineWith(parse_error(dict, std::vector<uint8_t>(1196)),
                          "x.npy: header says 1200 bytes of data but the file holds 1196; "
                          "the file is truncated"));
  EXPECT_TRUE(OneLineWith(parse_error(dict, std::vector<uint8_t>(1204)),
                          "x.npy: header says 1200 bytes of data but the file holds 1204; "
                          "npukit reads one array per .npy file"));
}

TEST(NpyErrors, UnsupportedDTypeListsTheSupportedOnes) {
  for (const char* descr : {"<c8", "|b1", "<u2", "<U3", "|O"}) {
    const std::string msg = parse_error(std::string("{'descr': '") + descr +
                                        "', 'fortran_order': False, 'shape': (1,), }");
    EXPECT_TRUE(OneLineWith(msg, std::string("x.npy: dtype '") + descr + "' is not supported"));
    for (const auto& [dtype, d] : kDescrs) {
      EXPECT_TRUE(OneLineWith(msg, std::string(npukit::dtype_name(dtype)) + " '" + d + "'"));
    }
  }
  const std::string structured =
      parse_error("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }");
  EXPECT_TRUE(OneLineWith(structured, "x.npy: dtype is structured (a list of fields)"));
  EXPECT_TRUE(OneLineWith(structured, "int64 '<i8'"));
}

TEST(NpyErrors, MalformedHeaderNamesTheKey) {
  const std::pair<const char*, const char*> cases[] = {
      {"{'descr': '<f4', 'fortran_order': False, }", "no 'shape' key"},
      {"{'descr': '<f4', 'shape': (1,), }", "no 'fortran_order' key"},
      {"{'fortran_order': False, 'shape': (1,), }", "no 'descr' key"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, -3), }", "'shape' must be"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': [2, 3], }", "'shape' must be"},
      {"{'descr': '<f4', 'fortran_order': 0, 'shape': (1,), }",
       "'fortran_order' must be True or False"},
      {"{'descr': 4, 'fortran_order': False, 'shape': (1,), }", "'descr' must be"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'extra': 1}",
       "unknown key 'extra'"},
      {"{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (1,)}",
       "duplicate key 'descr'"},
      {"{'descr': '<f4' 'fortran_order': False, 'shape': (1,)}",
       "expected ',' or '}' after the value of 'descr'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,)} junk",
       "text after the closing '}'"},
      {"['descr', '<f4']", "the header does not start with '{'"},
      {"{'descr: '<f4'}", "expected ':' after key"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}",
       "'shape' has a dimension too large for int64"},
  };
  for (const auto& [dict, part] : cases) {
    const std::string msg = parse_error(dict);
    EXPECT_TRUE(OneLineWith(msg, std::string("x.npy: malformed .npy header: ") + part)) << dict;
    EXPECT_TRUE(OneLineWith(msg, "a .npy header is a Python dict")) << dict;
  }
}

// Found by tests/fuzz/npy_fuzz.cpp: a key or dtype string holding a newline (or another
// control byte) is echoed in the message, which must stay one line.
TEST(NpyErrors, ControlBytesInEchoedStringsKeepOneLine) {
  EXPECT_TRUE(OneLineWith(parse_error("{'descr\n': '<f4', 'fortran_order': False, 'shape': (1,)}"),
                          "x.npy: malformed .npy header: unknown key 'descr?'"));
  EXPECT_TRUE(OneLineWith(parse_error("{'descr': '<f\r\n4', 'fortran_order': False, 'shape': (1,)}"),
                          "x.npy: dtype '<f??4'"));
}

TEST(NpyErrors, UnsupportedVersionAndTruncatedHeader) {
  std::vector<uint8_t> v4 =
      make_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (), }", {0, 0, 0, 0});
  v4[6] = 4;
  EXPECT_TRUE(OneLineWith(error_of([&] { npy::parse(v4, "x.npy"); }),
                          "x.npy: .npy format version 4.0 is not supported; "
                          "npukit reads 1.0, 2.0 and 3.0"));
  const std::vector<uint8_t> whole =
      make_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (), }", {0, 0, 0, 0});
  const std::vector<uint8_t> cut(whole.begin(), whole.begin() + 40);
  EXPECT_TRUE(OneLineWith(error_of([&] { npy::parse(cut, "x.npy"); }),
                          "x.npy: header length is 118 bytes but the file holds 30"));
  const std::vector<uint8_t> stub(whole.begin(), whole.begin() + 9);
  EXPECT_TRUE(OneLineWith(error_of([&] { npy::parse(stub, "x.npy"); }),
                          "x.npy: file ends inside the .npy header"));
}

TEST_F(NpyTest, WriteRefusesBytesThatDoNotMatchShape) {
  NpyArray a = make_array(DType::float32, {2, 3});
  a.bytes.pop_back();
  const std::string p = path("bad.npy");
  EXPECT_TRUE(OneLineWith(error_of([&] { npy::write(p, a); }),
                          p + ": array holds 23 bytes but shape (2, 3) of float32 needs 24"));
  EXPECT_FALSE(fs::exists(p));
  EXPECT_TRUE(OneLineWith(
      error_of([&] { npy::write(path("no/such/dir.npy"), make_array(DType::int8, {1})); }),
      "dir.npy: cannot open for writing ("));
}

TEST_F(NpyTest, ReadsWhatNumpyWrites) {
  ASSERT_TRUE(have_numpy()) << kPython << " has no numpy: the set-up installs python3-numpy";
  const std::string script = std::string(kPyCases) + R"(
for dt, tag, want in cases():
    np.save(f"{d}/{dt[1:]}_{tag}.npy", want)
half = np.array([0, 1, -2, 0.5, 65504, -0.25, 3.5, 1024], "<f2").reshape(2, 4)
np.save(f"{d}/half_table.npy", half)
cube = (np.arange(24) - 5).astype("<f4").reshape(2, 3, 4)
for major in (2, 3):
    with open(f"{d}/v{major}.npy", "wb") as f:
        np.lib.format.write_array(f, cube, version=(major, 0))
np.save(f"{d}/strided.npy", cube[:, ::2, ::-1])
np.save(f"{d}/fortran.npy", np.asfortranarray(cube))
np.save(f"{d}/big_endian.npy", cube.astype(">f4"))
np.save(f"{d}/bool.npy", np.zeros(3, bool))
)";
  std::string cmd;
  ASSERT_EQ(run_python(script, dir_.string(), &cmd), 0) << cmd;

  for (const auto& [dtype, descr] : kDescrs) {
    for (const auto& [tag, shape] : kShapes) {
      SCOPED_TRACE(descr + " " + tag);
      const NpyArray want = make_array(dtype, shape);
      const NpyArray got = npy::read(path(descr.substr(1) + "_" + tag + ".npy"));
      EXPECT_EQ(got.dtype, want.dtype);
      EXPECT_EQ(got.shape, want.shape);
      EXPECT_EQ(got.bytes, want.bytes);
    }
  }

  // Fractions and the largest finite half, checked against bit patterns from IEEE 754.
  const NpyArray half = npy::read(path("half_table.npy"));
  EXPECT_EQ(half.dtype, DType::float16);
  std::vector<uint8_t> half_want;
  for (uint16_t bits : {0x0000, 0x3C00, 0xC000, 0x3800, 0x7BFF, 0xB400, 0x4300, 0x6400})
    put_le(half_want, bits, 2);
  EXPECT_EQ(half.bytes, half_want);

  const NpyArray cube = make_array(DType::float32, {2, 3, 4});
  for (const char* name : {"v2.npy", "v3.npy"}) {
    const NpyArray got = npy::read(path(name));
    EXPECT_EQ(got.shape, cube.shape) << name;
    EXPECT_EQ(got.bytes, cube.bytes) << name;
  }

  // numpy saves a non-contiguous view as its C-order copy: element [i][j][k] is
  // cube[i][2j][3-k].
  std::vector<double> strided;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j)
      for (int k = 0; k < 4; ++k) strided.push_back(i * 12 + 2 * j * 4 + (3 - k) - 5);
  EXPECT_EQ(npy::read(path("strided.npy")).bytes, encode(DType::float32, strided));

  const std::string f = path("fortran.npy");
  EXPECT_EQ(error_of([&] { npy::read(f); }),
            f + ": fortran_order is True; npukit needs C order (np.ascontiguousarray)");
  const std::string b = path("big_endian.npy");
  EXPECT_EQ(error_of([&] { npy::read(b); }),
            b + ": dtype '>f4' is big-endian; npukit reads little-endian .npy only "
                "(save with arr.astype('<f4'))");
  EXPECT_TRUE(OneLineWith(error_of([&] { npy::read(path("bool.npy")); }),
                          "dtype '|b1' is not supported"));
}

TEST_F(NpyTest, NumpyReadsWhatNpukitWrites) {
  ASSERT_TRUE(have_numpy()) << kPython << " has no numpy: the set-up installs python3-numpy";
  for (const auto& [dtype, descr] : kDescrs)
    for (const auto& [tag, shape] : kShapes)
      npy::write(path(descr.substr(1) + "_" + tag + ".npy"), make_array(dtype, shape));

  // Loads each file and also demands the bytes np.save would write, header included.
  const std::string script = std::string(kPyCases) + R"(
bad = 0
for dt, tag, want in cases():
    p = f"{d}/{dt[1:]}_{tag}.npy"
    got = np.load(p)
    buf = io.BytesIO()
    np.save(buf, want)
    if got.dtype != want.dtype or got.shape != want.shape or not np.array_equal(got, want):
        print(f"{p}: numpy loaded {got.dtype} {got.shape}, want {want.dtype} {want.shape}")
        bad = 1
    elif open(p, "rb").read() != buf.getvalue():
        print(f"{p}: loads but is not byte-identical to np.save")
        bad = 1
sys.exit(bad)
)";
  std::string cmd;
  EXPECT_EQ(run_python(script, dir_.string(), &cmd), 0) << cmd;

  // The check can fail: an int64 file where int32 is expected must be caught.
  npy::write(path("i4_vec.npy"), make_array(DType::int64, {5}));
  EXPECT_EQ(run_python(script, dir_.string(), &cmd), 1) << cmd;
}

}  // namespace
