// A warm `kiln tune` maps no compiler (issue 58): the second `kiln tune` of
// a kernel over the same cache serves the stored shared object with no
// libLLVM, libclang-cpp or CPU backend plugin mapped, as the dynamic
// loader's own trace of the real process says (LD_DEBUG=files names every
// object it maps, at start and by dlopen alike).
#include <set>
#include <sstream>

#include "cli_runner.hpp"

namespace kiln {
namespace {

using testing::CliRun;
using WarmTuneNoLlvm = testing::CliTest;

// The objects the loader mapped, from LD_DEBUG=files in `trace`.
std::set<std::string> mapped(const std::string& trace) {
  std::set<std::string> files;
  std::istringstream lines(trace);
  for (std::string line; std::getline(lines, line);) {
    const auto at = line.find("file=");
    if (at == std::string::npos || line.find("generating link map") == std::string::npos) continue;
    const auto end = line.find_first_of(" [;", at + 5);
    std::string file = line.substr(at + 5, end - at - 5);
    files.insert(file.substr(file.rfind('/') + 1));
  }
  return files;
}

TEST_F(WarmTuneNoLlvm, TheSecondTuneMapsNoCompiler) {
  const std::string args = "tune --kernel fused_add_rmsnorm --shape rows=8,hidden=64 --json";
  CliRun cold = kiln_with("", args, "LD_DEBUG=files");
  ASSERT_EQ(cold.exit_code, 0) << cold.err.substr(0, 4000);
  EXPECT_EQ(cold.json()["source"], "tuned");
  // The trace sees the compiler where there is one: the check can fail.
  EXPECT_TRUE(mapped(cold.err).count("libkiln_cpu_backend.so")) << cold.err.substr(0, 4000);

  CliRun warm = kiln_with("", args, "LD_DEBUG=files");
  ASSERT_EQ(warm.exit_code, 0) << warm.err.substr(0, 4000);
  const nlohmann::json w = warm.json();
  EXPECT_EQ(w["source"], "disk") << warm.out;
  EXPECT_EQ(w["stats"]["compiled"], 0) << warm.out;
  const std::set<std::string> files = mapped(warm.err);
  ASSERT_TRUE(files.count("libc.so.6")) << "LD_DEBUG=files traced nothing";
  for (const std::string& file : files) {
    for (const char* heavy : {"libLLVM", "libclang-cpp", "libkiln_cpu_backend"}) {
      EXPECT_NE(file.rfind(heavy, 0), 0u) << "the warm kiln tune mapped " << file;
    }
  }
}

}  // namespace
}  // namespace kiln
