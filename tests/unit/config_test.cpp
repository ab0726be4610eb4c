#include "kiln/core/config.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "kiln/core/error.hpp"

namespace kiln {
namespace {

TEST(Config, TypedAccessAndText) {
  Config c{{"BM", std::int64_t{64}}, {"SPLIT", true}, {"LAYOUT", std::string("row")}};
  EXPECT_EQ(c.get_int("BM"), 64);
  EXPECT_TRUE(c.get_bool("SPLIT"));
  EXPECT_EQ(c.get_string("LAYOUT"), "row");
  EXPECT_EQ(c.to_string(), "BM=64,LAYOUT=row,SPLIT=true");
}

TEST(Config, MissingParameterIsNamed) {
  Config c{{"BM", std::int64_t{64}}};
  try {
    (void)c.get_int("BN");
    FAIL() << "expected kiln::Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("'BN'"), std::string::npos) << e.what();
  }
}

TEST(Config, WrongTypeIsNamed) {
  Config c{{"BM", std::int64_t{64}}};
  try {
    (void)c.get_bool("BM");
    FAIL();
  } catch (const Error& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("'BM'"), std::string::npos) << what;
    EXPECT_NE(what.find("int"), std::string::npos) << what;
  }
}

TEST(Config, JsonRoundTripKeepsTypes) {
  Config c{{"BM", std::int64_t{64}}, {"SPLIT", false}, {"LAYOUT", std::string("col")}};
  nlohmann::json j = c.to_json();
  EXPECT_TRUE(j["BM"].is_number_integer());
  EXPECT_TRUE(j["SPLIT"].is_boolean());
  EXPECT_EQ(Config::from_json(j), c);
  EXPECT_EQ(Config::from_json(nlohmann::json::parse(j.dump())), c);
}

TEST(Config, JsonRejectsFloatsAndNonObjects) {
  EXPECT_THROW(Config::from_json(nlohmann::json::parse(R"({"BM": 1.5})")), Error);
  EXPECT_THROW(Config::from_json(nlohmann::json::parse("[1,2]")), Error);
  EXPECT_THROW(Config::from_json(nlohmann::json::parse(R"({"BM": [1]})")), Error);
}

}  // namespace
}  // namespace kiln
