// npukit's own device memory (runtime/gpu_memory.h) on gpu-opencl (PoCL in CI): uploads,
// device-to-device copies and downloads keep every byte; prepared constants are uploaded
// once per part; gpu-cuda without a driver is a clean "no CUDA device" error.
#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "runtime/error.h"
#include "runtime/gpu_memory.h"

namespace npukit {
namespace {

std::vector<int32_t> iota(size_t n, int32_t from) {
  std::vector<int32_t> v(n);
  std::iota(v.begin(), v.end(), from);
  return v;
}

TEST(GpuMemory, UploadCopyAndDownloadKeepEveryByte) {
  const std::vector<int32_t> host = iota(3 * 37, -50);
  const TensorView view{const_cast<int32_t*>(host.data()), DType::int32, {3, 37}, {}};
  GpuTensor up("gpu-opencl", view);
  EXPECT_EQ(up.view().memory, TensorView::Memory::opencl);
  GpuScratch scratch("gpu-opencl");
  const TensorView& copy = scratch.copy_of(up.view());  // device to device
  EXPECT_NE(copy.data, up.view().data);
  GpuTensor again("gpu-opencl", DType::int32, {3, 37});
  again.copy_from_device(copy);
  std::vector<int32_t> back(host.size(), 0);
  again.copy_to_host(back.data());
  EXPECT_EQ(back, host);
  const TensorView& uploaded = scratch.copy_of(view);  // from the host
  EXPECT_EQ(uploaded.memory, TensorView::Memory::opencl);
}

TEST(GpuMemory, ConstantCopiesAreMadeOncePerPart) {
  const std::vector<int32_t> a = iota(64, 1), b = iota(16, 100);
  GpuConstantCopies copies("gpu-opencl");
  const TensorView va{const_cast<int32_t*>(a.data()), DType::int32, {64}, {}};
  const TensorView vb{const_cast<int32_t*>(b.data()), DType::int32, {16}, {}};
  const TensorView* first = &copies.of(va);
  EXPECT_EQ(&copies.of(va), first);
  copies.of(vb);
  copies.of(vb);
  EXPECT_EQ(copies.uploads(), 2u);
}

// Where there is a CUDA device the allocation simply works; elsewhere it is refused by name.
TEST(GpuMemory, CudaWithoutADeviceIsUnsupported) {
  try {
    GpuTensor t("gpu-cuda", DType::float32, {4});
    EXPECT_EQ(t.view().memory, TensorView::Memory::cuda);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::unsupported) << e.what();
    EXPECT_NE(std::string(e.what()).find("no CUDA device was found"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace npukit
