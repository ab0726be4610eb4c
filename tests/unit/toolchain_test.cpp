// The toolchain probe on this machine: NVRTC is loaded with dlopen when a
// toolkit is present; the driver's absence is a state with a reason.
#include "kiln/runtime/toolchain.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "kiln/core/options.hpp"

namespace kiln {
namespace {

bool toolkit_nvrtc_present() {
  return std::filesystem::exists(Options::global().cuda_home / "lib64" / "libnvrtc.so.13");
}

TEST(Toolchain, FingerprintMatchesTheReport) {
  const ToolchainReport& r = toolchain_report();
  EXPECT_EQ(&r, &toolchain_report());  // probed once
  EXPECT_EQ(r.fingerprint.kiln_version, kiln_version());
  EXPECT_EQ(r.fingerprint.codegen_hash, kiln_codegen_hash());
  EXPECT_EQ(r.fingerprint.nvrtc_version, r.nvrtc.available ? r.nvrtc.version : "absent");
  EXPECT_EQ(r.fingerprint.llvm_version, r.llvm.available ? r.llvm.version : "absent");
  EXPECT_EQ(current_toolchain(), r.fingerprint);
}

TEST(Toolchain, NvrtcFromTheToolkitIsFound) {
  const ToolchainReport& r = toolchain_report();
  if (!KILN_TEST_HAVE_CUDA) {
    EXPECT_FALSE(r.nvrtc.built);
    EXPECT_NE(r.nvrtc.reason.find("not built"), std::string::npos);
    return;
  }
  if (!toolkit_nvrtc_present())
    GTEST_SKIP() << "no CUDA 13 toolkit at " << Options::global().cuda_home;
  ASSERT_TRUE(r.nvrtc.available) << r.nvrtc.reason;
  EXPECT_EQ(r.nvrtc.version, "13.0");
  EXPECT_NE(r.nvrtc.location.find("libnvrtc"), std::string::npos);
}

TEST(Toolchain, MissingDriverOrDeviceHasAReason) {
  const ToolchainReport& r = toolchain_report();
  if (!r.cuda.devices.empty()) GTEST_SKIP() << "a CUDA device is present";
  EXPECT_FALSE(r.cuda.devices_reason.empty());
  if (!r.cuda.driver.available) {
    EXPECT_FALSE(r.cuda.driver.reason.empty());
  }
}

TEST(Toolchain, LlvmMatchesTheBuild) {
  const ToolchainReport& r = toolchain_report();
  EXPECT_EQ(r.llvm.built, static_cast<bool>(KILN_TEST_HAVE_LLVM));
  if (KILN_TEST_HAVE_LLVM) {
    EXPECT_EQ(r.llvm.version.rfind("19.", 0), 0u) << r.llvm.version;
  }
}

TEST(Toolchain, JsonHasEveryPart) {
  nlohmann::json j = toolchain_report().to_json();
  for (const char* key : {"nvrtc", "llvm", "cuda", "fingerprint"})
    EXPECT_TRUE(j.contains(key)) << key;
  EXPECT_TRUE(j["cuda"].contains("devices"));
  EXPECT_EQ(j["fingerprint"]["hash"], current_toolchain().hash().hex());
}

}  // namespace
}  // namespace kiln
