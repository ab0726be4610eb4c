// The toolchain probe on this machine: NVRTC is loaded with dlopen when a
// toolkit is present; the driver's absence is a state with a reason.
#include "kiln/backends/toolchain.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "kiln/core/error.hpp"
#include "kiln/core/options.hpp"
#include "kiln/device/backend.hpp"
#include "skip.hpp"

namespace kiln {
namespace {

bool toolkit_nvrtc_present() {
  return std::filesystem::exists(Options::global().cuda_home / "lib64" / "libnvrtc.so.13");
}

TEST(Toolchain, FingerprintMatchesTheReport) {
  const ToolchainReport& r = toolchain_report();
  EXPECT_EQ(&r, &toolchain_report());  // probed once
  EXPECT_EQ(r.fingerprints.size(), backends().size());
  for (const auto& [name, f] : r.fingerprints) {
    EXPECT_EQ(f.kiln_version, kiln_version());
    EXPECT_EQ(f.codegen_hash, kiln_codegen_hash());
    EXPECT_EQ(f.backend, name);
  }
  // Each backend's part is its own compiler alone.
  if (KILN_TEST_HAVE_CUDA) {
    EXPECT_EQ(r.fingerprints.at("cuda").compiler,
              r.nvrtc.available ? "nvrtc " + r.nvrtc.version : "absent");
    EXPECT_EQ(current_toolchain("cuda"), r.fingerprints.at("cuda"));
  }
  if (KILN_TEST_HAVE_LLVM) {
    EXPECT_EQ(r.fingerprints.at("cpu").compiler, "llvm " + r.llvm.version);
    EXPECT_EQ(current_toolchain("cpu"), r.fingerprints.at("cpu"));
  }
}

// A backend this build lacks still has a fingerprint (its compiler absent),
// and the registration list holds exactly the backends built.
TEST(Toolchain, RegisteredBackendsAreTheBuiltOnes) {
  EXPECT_EQ(find_backend("cpu").ok(), static_cast<bool>(KILN_TEST_HAVE_LLVM));
  EXPECT_EQ(find_backend("cuda").ok(), static_cast<bool>(KILN_TEST_HAVE_CUDA));
  for (std::string kind : {"cpu", "cuda"}) {
    auto b = find_backend(kind);
    if (b.ok()) {
      EXPECT_EQ((*b)->name(), kind);
      EXPECT_EQ(find_backend((*b)->name()).value(), *b);
    } else {
      EXPECT_NE(b.error().message.find("rebuild with KILN_WITH_"), std::string::npos);
      EXPECT_EQ(current_toolchain(kind).compiler, "absent");
    }
  }
  auto unknown = find_backend("tpu");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().code, ErrorCode::kInvalidArgument);
}

TEST(Toolchain, NvrtcFromTheToolkitIsFound) {
  const ToolchainReport& r = toolchain_report();
  if (!KILN_TEST_HAVE_CUDA) {
    EXPECT_FALSE(r.nvrtc.built);
    EXPECT_NE(r.nvrtc.reason.find("not built"), std::string::npos);
    return;
  }
  if (!toolkit_nvrtc_present())
    KILN_SKIP(Skip::kCudaToolkit) << "no CUDA 13 toolkit at " << Options::global().cuda_home;
  ASSERT_TRUE(r.nvrtc.available) << r.nvrtc.reason;
  EXPECT_EQ(r.nvrtc.version, "13.0");
  EXPECT_NE(r.nvrtc.location.find("libnvrtc"), std::string::npos);
}

TEST(Toolchain, MissingDriverOrDeviceHasAReason) {
  const ToolchainReport& r = toolchain_report();
  if (!r.cuda.devices.empty()) KILN_SKIP(Skip::kGpuPresent) << "a CUDA device is present";
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
  for (const char* key : {"nvrtc", "llvm", "cuda", "fingerprints"})
    EXPECT_TRUE(j.contains(key)) << key;
  EXPECT_TRUE(j["cuda"].contains("devices"));
  for (const DeviceBackend* b : backends()) {
    EXPECT_EQ(j["fingerprints"][b->name()]["hash"], current_toolchain(b->name()).hash().hex());
  }
}

}  // namespace
}  // namespace kiln
