// libFuzzer target: the .npy reader (tools/npy.cpp) on arbitrary bytes. Every input is an
// array whose bytes match its header, or a std::runtime_error with one printable line;
// anything else (a crash, a sanitizer report, another exception, a leak) is a finding.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "tests/fuzz/fuzz_check.h"
#include "tools/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::vector<uint8_t> bytes(data, data + size);
  try {
    const npukit::npy::NpyArray a = npukit::npy::parse(bytes, "fuzz.npy");
    const int64_t n = a.size();
    NPUKIT_FUZZ_CHECK(n >= 0);
    NPUKIT_FUZZ_CHECK(a.bytes.size() == static_cast<uint64_t>(n) * npukit::dtype_size(a.dtype));
  } catch (const std::runtime_error& e) {
    npukit::fuzz::check_message(e.what(), "fuzz.npy: ");
  }
  return 0;
}
