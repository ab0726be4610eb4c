// Recorded spaces inside zip archives (the benchmark hub ships KTT's output
// files zipped): the archive reads as the file it holds, and an archive a
// replay cannot take is refused with the names and the fix. Archives are
// written by Python's zipfile (deflated), the interpreter setup.sh installs.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "kiln/lab/recorded_space.hpp"
#include "recorded_zip.hpp"
#include "skip.hpp"

namespace kiln {
namespace {

// Three tile sizes, one failed to compile: 4 the optimum at 0.5 ms.
const char* kZippedSpace = R"({"device_name": "Zip GPU", "kernel_name": "zipped",
  "tune_params_keys": ["tile"], "tune_params": {"tile": [1, 2, 4]}, "cache": {
  "1": {"tile": 1, "time": 2.0, "compile_time": 800, "benchmark_time": 50},
  "2": {"tile": 2, "time": "CompilationFailedConfig", "compile_time": 300, "benchmark_time": 0},
  "4": {"tile": 4, "time": 0.5, "compile_time": 900, "benchmark_time": 40}}})";

class RecordedZipTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/kiln-zip-XXXXXX";
    dir_ = ::mkdtemp(dir);
    std::ofstream(dir_ / "space.json") << kZippedSpace;
    std::ofstream(dir_ / "notes.txt") << "measured on a tiny GPU\n";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // `archive` made of `members` (names under dir_), deflated, by zipfile's CLI.
  std::filesystem::path zip(const std::string& archive, const std::string& members) {
    const std::string cmd = "cd " + dir_.string() + " && python3 -m zipfile -c " + archive + " " +
                            members + " > /dev/null";
    EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
    return dir_ / archive;
  }

  std::filesystem::path dir_;
};

TEST_F(RecordedZipTest, AZipOfOneSpaceReadsAsTheSpaceItHolds) {
  const std::filesystem::path archive = zip("space.zip", "space.json");
  Result<RecordedSpace> plain = read_recorded_space(dir_ / "space.json");
  ASSERT_TRUE(plain.ok()) << plain.error().message;
  Result<RecordedSpace> r = read_recorded_space(archive);
  if (!detail::zip_supported()) {
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, ErrorCode::kUnavailable);
    EXPECT_NE(r.error().message.find("libzip-dev"), std::string::npos) << r.error().message;
    return;
  }
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->device, "Zip GPU");
  EXPECT_EQ(r->kernel, "zipped");
  ASSERT_EQ(r->configs.size(), plain->configs.size());
  for (std::size_t i = 0; i < r->configs.size(); ++i) {
    EXPECT_EQ(r->configs[i].config.key(), plain->configs[i].config.key());
    EXPECT_EQ(r->configs[i].time_ms, plain->configs[i].time_ms);
    EXPECT_EQ(r->configs[i].failure, plain->configs[i].failure);
  }
  EXPECT_EQ(r->optimum_ms, 0.5);
}

TEST_F(RecordedZipTest, AFolderEntryDoesNotCountAsAMember) {
  std::filesystem::create_directory(dir_ / "run");
  std::filesystem::copy(dir_ / "space.json", dir_ / "run" / "space.json");
  const std::filesystem::path archive = zip("folder.zip", "run");  // run/ and run/space.json
  if (!detail::zip_supported())
    KILN_SKIP(Skip::kLibzip) << "built without libzip (the refusal: above)";
  Result<RecordedSpace> r = read_recorded_space(archive);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->configs.size(), 3u);
}

TEST_F(RecordedZipTest, AZipOfSeveralFilesIsRefusedNamingThem) {
  if (!detail::zip_supported())
    KILN_SKIP(Skip::kLibzip) << "built without libzip (the refusal: above)";
  const std::filesystem::path archive = zip("two.zip", "space.json notes.txt");
  Result<RecordedSpace> r = read_recorded_space(archive);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
  for (const char* why : {"2 files", "space.json", "notes.txt", "unzip "})
    EXPECT_NE(r.error().message.find(why), std::string::npos) << r.error().message;
}

TEST_F(RecordedZipTest, AnEmptyZipIsRefused) {
  if (!detail::zip_supported())
    KILN_SKIP(Skip::kLibzip) << "built without libzip (the refusal: above)";
  const std::filesystem::path archive = zip("empty.zip", "");
  Result<RecordedSpace> r = read_recorded_space(archive);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(r.error().message.find("no file in it"), std::string::npos) << r.error().message;
}

TEST_F(RecordedZipTest, ACutOrDamagedZipIsCorruptNotASmallerSpace) {
  if (!detail::zip_supported())
    KILN_SKIP(Skip::kLibzip) << "built without libzip (the refusal: above)";
  const std::filesystem::path archive = zip("space.zip", "space.json");
  std::ifstream in(archive, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_GT(bytes.size(), 100u);
  {  // cut in half: the central directory is gone
    std::ofstream(dir_ / "cut.zip", std::ios::binary) << bytes.substr(0, bytes.size() / 2);
    Result<RecordedSpace> r = read_recorded_space(dir_ / "cut.zip");
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, ErrorCode::kCorrupt) << r.error().message;
    EXPECT_NE(r.error().message.find("unzip -t"), std::string::npos) << r.error().message;
  }
  {  // a byte of the deflated member flipped: the CRC (or the stream) fails
    std::string flipped = bytes;
    const std::size_t at = 30 + std::string("space.json").size() + 20;  // past the local header
    flipped[at] = static_cast<char>(flipped[at] ^ 0x5a);
    std::ofstream(dir_ / "flipped.zip", std::ios::binary) << flipped;
    Result<RecordedSpace> r = read_recorded_space(dir_ / "flipped.zip");
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, ErrorCode::kCorrupt) << r.error().message;
    EXPECT_NE(r.error().message.find("does not read whole"), std::string::npos)
        << r.error().message;
  }
}

}  // namespace
}  // namespace kiln
