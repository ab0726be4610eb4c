// `kiln tune` with tuning off (KILN_TUNING=0) on a shape with no record:
// served the winner of the nearest tuned shape of the same kernel and
// device when one is valid here, else the default, and the report says
// which (issue 57 §1). Real processes, real Clang compiles on the CPU
// backend, a fresh cache directory per test.
#include "cli_runner.hpp"

namespace kiln {
namespace {

using NearestCli = testing::CliTest;

constexpr const char* kGemm = "tune --kernel gemm --backend cpu --json --max-configs 3 --shape ";

TEST_F(NearestCli, AnUntunedShapeIsServedTheNearestTunedWinner) {
  const testing::CliRun tuned = kiln(std::string(kGemm) + "M=64,N=64,K=64");
  ASSERT_EQ(tuned.exit_code, 0) << tuned.err;
  ASSERT_EQ(tuned.json()["source"], "tuned");
  // Two tuned shapes: the nearest (log2 over the sizes) is the one served.
  ASSERT_EQ(kiln(std::string(kGemm) + "M=512,N=512,K=512").exit_code, 0);

  const testing::CliRun off = kiln_with("", std::string(kGemm) + "M=80,N=64,K=64", "KILN_TUNING=0");
  ASSERT_EQ(off.exit_code, 0) << off.err;
  const nlohmann::json j = off.json();
  const std::string source = j["source"];
  EXPECT_EQ(source.rfind("nearest: ", 0), 0u) << source;
  EXPECT_NE(source.find("#M=int:64"), std::string::npos) << "not the nearest shape: " << source;
  EXPECT_EQ(j["winner"]["config"], tuned.json()["winner"]["config"]) << "not that shape's winner";
  EXPECT_EQ(j["stats"]["served_nearest"], 1);
  EXPECT_EQ(j["stats"]["benchmarked"], 0) << "tuning is off: nothing is measured";

  const testing::CliRun text =
      kiln_with("", "tune --kernel gemm --backend cpu --shape M=80,N=64,K=64", "KILN_TUNING=0");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("source: nearest: "), std::string::npos) << text.out;
}

TEST_F(NearestCli, WithNoTunedShapeTheDefaultIsServedAndSaidSo) {
  const testing::CliRun off = kiln_with("", std::string(kGemm) + "M=80,N=64,K=64", "KILN_TUNING=0");
  ASSERT_EQ(off.exit_code, 0) << off.err;
  const nlohmann::json j = off.json();
  EXPECT_EQ(j["source"], "default");
  EXPECT_EQ(j["stats"]["served_default"], 1);
  EXPECT_EQ(j["stats"]["served_nearest"], 0);
}

}  // namespace
}  // namespace kiln
