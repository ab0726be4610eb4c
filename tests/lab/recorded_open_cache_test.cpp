// Kernel Tuner cache files left open by a tuning run (closed only when the
// run ends) read as Kernel Tuner reads them, a record cut off by a killed
// run dropped, and a closed file that is broken still refused.
#include <gtest/gtest.h>

#include <string>

#include "kiln/lab/recorded_space.hpp"

namespace kiln {
namespace {

// As Kernel Tuner writes it: the header dumped with indent "" minus its
// closing "}\n}", then "\n" + one record + "," per measured config.
const std::string kHeader = R"({
"device_name": "Test GPU",
"kernel_name": "tiny",
"tune_params_keys": [
"x",
"y"
],
"tune_params": {
"x": [
1,
2
],
"y": [
8,
16
]
},
"objective": "time",
"cache": {)";
const std::string kFirst =
    R"(
"1,8": {"x": 1, "y": 8, "time": 4.0, "times": [4.0, 4.0], "compile_time": 1000, "benchmark_time": 100},)";
const std::string kSecond =
    R"(
"2,8": {"x": 2, "y": 8, "time": 1.0, "times": [1.0, 1.0], "compile_time": 2000, "benchmark_time": 100},)";

Result<RecordedSpace> parse_open(const std::string& text) {
  return parse_recorded_space(text, "open.json");
}

TEST(RecordedOpenCache, AFileLeftOpenBetweenRecordsReadsEveryRecord) {
  Result<RecordedSpace> r = parse_open(kHeader + kFirst + kSecond);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->configs.size(), 2u);
  EXPECT_DOUBLE_EQ(r->optimum_ms, 1.0);
  EXPECT_EQ(r->device, "Test GPU");
  // Trailing whitespace, and a last record whose comma was never written.
  ASSERT_TRUE(parse_open(kHeader + kFirst + kSecond + "\n\n").ok());
  Result<RecordedSpace> no_comma =
      parse_open(kHeader + kFirst + kSecond.substr(0, kSecond.size() - 1));
  ASSERT_TRUE(no_comma.ok()) << no_comma.error().message;
  EXPECT_EQ(no_comma->configs.size(), 2u);
}

// A run killed mid-write leaves part of a record: every cut of the second
// record reads the first record alone, never a shortened time or config.
TEST(RecordedOpenCache, ARecordCutOffByAKilledRunIsDropped) {
  for (std::size_t cut = 1; cut + 1 < kSecond.size(); ++cut) {
    Result<RecordedSpace> r = parse_open(kHeader + kFirst + kSecond.substr(0, cut));
    ASSERT_TRUE(r.ok()) << "cut at " << cut << ": " << r.error().message;
    ASSERT_EQ(r->configs.size(), 1u) << "cut at " << cut;
    EXPECT_DOUBLE_EQ(r->optimum_ms, 4.0) << "cut at " << cut;
  }
}

TEST(RecordedOpenCache, AFileWithNoCompleteRecordIsNamedAsEmpty) {
  for (const std::string& text : {kHeader, kHeader + "\n", kHeader + kFirst.substr(0, 20)}) {
    Result<RecordedSpace> r = parse_open(text);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().message.find("open.json holds no configs"), std::string::npos)
        << r.error().message;
  }
}

// Closed files are not cut: a broken record in one is an error, named.
TEST(RecordedOpenCache, AClosedFileThatIsBrokenIsStillRefused) {
  const std::string broken = kHeader + kFirst + "\n\"2,8\": {\"x\": 2, \"y\": 8, \"time\": }\n}";
  Result<RecordedSpace> r = parse_open(broken);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("open.json is not a JSON object"), std::string::npos)
      << r.error().message;
  // The error is the file's own, not that of a closing tried on it: an
  // open file with Infinity in a record names that record's byte.
  std::string infinite = kFirst;
  infinite.replace(infinite.find("4.0"), 3, "Infinity");
  const std::string open = kHeader + infinite + kSecond;
  Result<RecordedSpace> inf = parse_open(open);
  ASSERT_FALSE(inf.ok());
  EXPECT_NE(
      inf.error().message.find("stopped at byte " + std::to_string(open.find("Infinity") + 1)),
      std::string::npos)
      << inf.error().message;
  EXPECT_NE(inf.error().message.find("NaN and Infinity"), std::string::npos) << inf.error().message;
  // Nor is text that is no cache file at all made into one.
  EXPECT_FALSE(parse_open("{\"results\": [,").ok());
  EXPECT_FALSE(parse_open("\"cache\": {").ok());
}

}  // namespace
}  // namespace kiln
