// A config's identity: two distinct configs whose joined text is the same
// ({a: "1,b=2", b: "3"} and {a: "1", b: "2,b=3"} both read "a=1,b=2,b=3")
// must stay two configs in maps keyed by config (Config::key); the lab's
// recorded spaces keep them apart too (tests/lab/recorded_config_identity_test.cpp).
// The text people read (Config::to_string) is unchanged.
#include <gtest/gtest.h>

#include <string>

#include "kiln/core/config.hpp"

namespace kiln {
namespace {

Config identity_ab(std::string a, std::string b) {
  return Config{{"a", std::move(a)}, {"b", std::move(b)}};
}

TEST(ConfigIdentity, KeysOfConfigsThatReadAlikeDiffer) {
  const Config one = identity_ab("1,b=2", "3");
  const Config two = identity_ab("1", "2,b=3");
  ASSERT_NE(one, two);
  EXPECT_EQ(one.to_string(), two.to_string());  // the display is as before
  EXPECT_EQ(one.to_string(), "a=1,b=2,b=3");
  EXPECT_NE(one.key(), two.key());
  // A string that reads as an int or bool is not that int or bool.
  EXPECT_NE((Config{{"x", std::string("1")}}.key()), (Config{{"x", std::int64_t{1}}}.key()));
  EXPECT_NE((Config{{"x", std::string("true")}}.key()), (Config{{"x", true}}.key()));
  // Escapes do not collide with their own text.
  EXPECT_NE((Config{{"x", std::string("a\\,b")}}.key()), (Config{{"x", std::string("a,b")}}.key()));
  // Plain configs keep their text as key.
  const Config plain{{"BM", std::int64_t{64}}, {"SWIZZLE", true}, {"LAYOUT", std::string("row")}};
  EXPECT_EQ(plain.key(), plain.to_string());
}

}  // namespace
}  // namespace kiln
