#include "runtime/halide_call.h"

#include <mutex>

#include "runtime/halide_memory.h"

namespace npukit {
namespace {

halide_type_t halide_type(DType t) {
  switch (t) {
    case DType::float32: return halide_type_t(halide_type_float, 32);
    case DType::float16: return halide_type_t(halide_type_float, 16);
    case DType::float64: return halide_type_t(halide_type_float, 64);
    case DType::int8: return halide_type_t(halide_type_int, 8);
    case DType::uint8: return halide_type_t(halide_type_uint, 8);
    case DType::int32: return halide_type_t(halide_type_int, 32);
    case DType::int64: return halide_type_t(halide_type_int, 64);
  }
  return halide_type_t();
}

std::mutex error_mutex;

extern "C" void npukit_halide_error(void* user_context, const char* msg) {
  // Halide may report from worker threads, and more than once per call.
  std::lock_guard<std::mutex> lock(error_mutex);
  if (auto* ctx = static_cast<HalideCallContext*>(user_context)) {
    if (!ctx->error.empty()) ctx->error += "; ";
    ctx->error += msg;
    while (!ctx->error.empty() && ctx->error.back() == '\n') ctx->error.pop_back();
  }
}

extern "C" void npukit_halide_print(void*, const char*) {
  // The runtime prints only diagnostics that also arrive through the error handler.
}

}  // namespace

HalideBuffer::HalideBuffer(const TensorView& t) {
  const size_t n = t.shape.size();
  // Compact strides when none are given.
  const int64_t* strides = t.strides.empty() ? nullptr : t.strides.data();
  int64_t step = 1;
  for (size_t i = 0; i < n; ++i) {
    const size_t axis = n - 1 - i;
    const int64_t extent = t.shape[axis];
    dims_.d[i] = halide_dimension_t(0, static_cast<int32_t>(extent), static_cast<int32_t>(strides ? strides[axis] : step));
    step *= extent;
  }
  buf_.host = static_cast<uint8_t*>(t.data);
  buf_.type = halide_type(t.dtype);
  buf_.dimensions = static_cast<int32_t>(n);
  buf_.dim = dims_.d;
}

HalideCallContext::HalideCallContext() { install_halide_handlers(); }

void install_halide_handlers() {
  // A function-local static rather than std::call_once: every kernel call passes here, and
  // call_once sets thread-locals on each pass.
  static const bool installed = [] {
    halide_set_error_handler(npukit_halide_error);
    halide_set_custom_print(npukit_halide_print);
    halide_set_custom_malloc(halide_block_malloc);
    halide_set_custom_free(halide_block_free);
    return true;
  }();
  (void)installed;
}

void check_halide_status(int status, const HalideCallContext& ctx, const char* kernel, std::string_view variant) {
  if (status == 0) return;
  std::string msg = ctx.error.empty() ? "no message from the Halide runtime" : ctx.error;
  const std::string name = variant.empty() ? std::string(kernel) : fmt::format("{} ({})", kernel, variant);
  fail(Errc::kernel_failed, "{} failed (Halide status {}): {}", name, status, msg);
}

}  // namespace npukit
