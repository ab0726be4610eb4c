// make_call and the CPU device on sizes past what fits: every size is
// checked before anything is allocated, and every refusal is a value naming
// the dims and the limit, never a throw, a wrapped size or a crash.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

#include "kiln/backends/cpu.hpp"
#include "kiln/kernels/kernel_call.hpp"
#include "kiln/kernels/shipped_kernels.hpp"

namespace kiln {
namespace {

std::vector<ArgSpec> gemm_args() {
  return find_shipped_kernel("gemm_f32")->args(DType::kF32);
}

TEST(KernelCallSize, CallBytesAreExactAndChecked) {
  // A [4,2] + B [2,8] + C [4,8], all f32.
  EXPECT_EQ(call_bytes(gemm_args(), {{"M", 4}, {"N", 8}, {"K", 2}}), (8 + 16 + 32) * 4);
  try {
    (void)call_bytes(gemm_args(), {{"M", 1 << 30}, {"N", 1 << 30}, {"K", 1 << 30}});
    ADD_FAILURE() << "three tensors of 2^62 bytes overflow their sum";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("M=1073741824, K=1073741824, N=1073741824: the call's "
                                         "tensors together overflow"),
              std::string::npos)
        << e.what();
  }
  try {
    (void)call_bytes(gemm_args(), {{"M", 2147483647}, {"N", 2147483647}, {"K", 2147483647}});
    ADD_FAILURE() << "2^62 elements of 4 bytes fit nothing";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("M*K*4 bytes for tensor 'A'"), std::string::npos)
        << e.what();
  }
}

TEST(KernelCallSize, TooLargeForTheDeviceIsAValueBeforeAnyAllocation) {
  auto device = cpu::open_device(1);
  ASSERT_TRUE(device.ok());
  const auto& props = (*device)->properties();
  ASSERT_GT(props.total_memory, 0u);
  // Fits 64 bits and i32, not the machine: 3 EiB.
  const ShapeDims huge{{"M", 1 << 29}, {"N", 1 << 29}, {"K", 1 << 29}};
  Result<KernelCall> call = make_call(**device, gemm_args(), huge, 0);
  ASSERT_FALSE(call.ok());
  EXPECT_EQ(call.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(call.error().message.find("M=536870912"), std::string::npos) << call.error().message;
  EXPECT_NE(call.error().message.find("more than the cpu device's"), std::string::npos);
  EXPECT_EQ(call.error().details.at("device_memory"), std::to_string(props.total_memory));
}

TEST(KernelCallSize, SpecErrorsComeBackAsValuesNotThrows) {
  auto device = cpu::open_device(1);
  ASSERT_TRUE(device.ok());
  Result<KernelCall> missing = ErrorInfo{};
  EXPECT_NO_THROW(missing = make_call(**device, gemm_args(), {{"M", 4}, {"N", 4}}, 0));
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("unknown name 'K'"), std::string::npos);
  Result<KernelCall> narrow = ErrorInfo{};
  EXPECT_NO_THROW(narrow = make_call(**device, gemm_args(),
                                     {{"M", 4}, {"N", 4}, {"K", std::int64_t{1} << 31}}, 0));
  ASSERT_FALSE(narrow.ok());
  EXPECT_NE(narrow.error().message.find("argument 'K' (i32)"), std::string::npos);
}

TEST(KernelCallSize, TheCpuDeviceRefusesMoreThanItsMemory) {
  auto device = cpu::open_device(1);
  ASSERT_TRUE(device.ok());
  // SIZE_MAX once rounded up to a 0-byte allocation that "succeeded".
  for (std::size_t bytes :
       {std::numeric_limits<std::size_t>::max(), (*device)->properties().total_memory + 1}) {
    auto buffer = (*device)->allocate(bytes);
    ASSERT_FALSE(buffer.ok()) << bytes;
    EXPECT_NE(buffer.error().message.find("cannot allocate"), std::string::npos);
  }
  auto small = (*device)->allocate(4096);
  EXPECT_TRUE(small.ok());
}

}  // namespace
}  // namespace kiln
