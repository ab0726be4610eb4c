// A config's identity in a recorded space: two distinct configs whose joined
// text is the same ({a: "1,b=2", b: "3"} and {a: "1", b: "2,b=3"} both read
// "a=1,b=2,b=3") stay two configs in the space's index and in a T4 file's
// results (Config::key; tests/tuner/config_identity_test.cpp).
#include <gtest/gtest.h>

#include <string>

#include "kiln/core/config.hpp"
#include "kiln/lab/recorded_space.hpp"

namespace kiln {
namespace {

Config identity_ab(std::string a, std::string b) {
  return Config{{"a", std::move(a)}, {"b", std::move(b)}};
}

TEST(ConfigIdentity, ARecordedSpaceHoldsBothConfigsOfACollidingPair) {
  const char* text = R"({
    "tune_params_keys": ["a", "b"],
    "tune_params": {"a": ["1,b=2", "1"], "b": ["3", "2,b=3"]},
    "cache": {
      "one": {"a": "1,b=2", "b": "3", "time": 2.0},
      "two": {"a": "1", "b": "2,b=3", "time": 1.0}
    }})";
  Result<RecordedSpace> space = parse_recorded_space(text, "collide.json");
  ASSERT_TRUE(space.ok()) << space.error().message;
  ASSERT_EQ(space->configs.size(), 2u);
  const RecordedConfig* one = space->find(identity_ab("1,b=2", "3"));
  const RecordedConfig* two = space->find(identity_ab("1", "2,b=3"));
  ASSERT_TRUE(one && two);
  EXPECT_EQ(one->time_ms, 2.0);
  EXPECT_EQ(two->time_ms, 1.0);
  EXPECT_EQ(space->find(identity_ab("1", "3")), nullptr);
}

TEST(ConfigIdentity, AT4FileHoldsBothResultsWhoseValuesJoinAlike) {
  // Kernel Tuner's cache key joins values with commas: both are "1,2,3".
  const char* text = R"({
    "schema_version": "1.0.0", "metadata": {"timeunit": "milliseconds"},
    "results": [
      {"configuration": {"a": "1,2", "b": "3"}, "times": {"compilation": 10, "benchmark": 5},
       "invalidity": "correct", "measurements": [{"name": "time", "value": 4.0, "unit": "ms"}]},
      {"configuration": {"a": "1", "b": "2,3"}, "times": {"compilation": 10, "benchmark": 5},
       "invalidity": "correct", "measurements": [{"name": "time", "value": 3.0, "unit": "ms"}]}
    ]})";
  Result<RecordedSpace> space = parse_recorded_space(text, "collide_T4.json");
  ASSERT_TRUE(space.ok()) << space.error().message;
  ASSERT_EQ(space->configs.size(), 2u);
  const RecordedConfig* first = space->find(identity_ab("1,2", "3"));
  const RecordedConfig* second = space->find(identity_ab("1", "2,3"));
  ASSERT_TRUE(first && second);
  EXPECT_EQ(first->time_ms, 4.0);
  EXPECT_EQ(second->time_ms, 3.0);
}

}  // namespace
}  // namespace kiln
