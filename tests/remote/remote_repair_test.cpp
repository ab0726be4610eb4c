// What the remote tier writes to local disk is never named after a damaged
// file (issue 54): a remote hit is stored like a compile's result, and a
// program file of its name that does not hold its bytes is replaced, not
// taken by the name. Real `kiln` processes, a real redis-server.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include "remote_test_util.hpp"

namespace kiln::testing {
namespace {

namespace fs = std::filesystem;

void flip_payload_byte(const fs::path& path) {
  std::string bytes;
  {
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  ASSERT_GT(bytes.size(), 100u) << path;
  bytes[bytes.size() - 17] ^= 0x40;
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

TEST(RemoteRepair, APullOverDamagedProgramsOfTheSameNamesLeavesVerifyClean) {
  KILN_REQUIRE_REDIS();
  RedisServer server;
  ASSERT_TRUE(server.running());
  Machine a, b, keys;
  const std::string env = "KILN_REMOTE_CACHE=" + server.url() +
                          " KILN_REMOTE_CACHE_SECRET_FILE=" + keys.file("secret", "team-key\n");
  ASSERT_EQ(tune_on(a, "").run.exit_code, 0);
  auto kiln = [&](const Machine& m, const std::string& args) {
    return run_with_deadline("env KILN_CACHE_DIR=" + m.dir().string() + " " + env +
                             " " KILN_CLI_PATH " " + args);
  };
  ASSERT_EQ(kiln(a, "cache remote push").exit_code, 0);

  // B holds A's programs under their names, each with one byte flipped,
  // and no entry naming them.
  fs::copy(a.dir() / "artifacts", b.dir() / "artifacts", fs::copy_options::recursive);
  int damaged = 0;
  for (const auto& e : fs::recursive_directory_iterator(b.dir() / "artifacts")) {
    if (!e.is_regular_file()) continue;
    if (e.path().extension() == ".kiln") fs::remove(e.path());
    if (e.path().extension() == ".prog") flip_payload_byte(e.path()), ++damaged;
  }
  ASSERT_GT(damaged, 0);

  DeadlineRun pull = kiln(b, "cache remote pull --json");
  ASSERT_EQ(pull.exit_code, 0) << pull.err;
  ASSERT_GT(nlohmann::json::parse(pull.out)["artifacts"].get<int>(), 0) << pull.out;
  DeadlineRun verify = kiln(b, "cache verify --json");
  EXPECT_EQ(verify.exit_code, 0) << verify.out;
  // B is warm from what it pulled, offline.
  TuneRun offline = tune_on(b, "");
  EXPECT_EQ(offline.compiled(), 0) << offline.run.out;
}

}  // namespace
}  // namespace kiln::testing
