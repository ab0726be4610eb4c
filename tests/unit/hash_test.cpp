#include "kiln/core/hash.hpp"

#include <gtest/gtest.h>

namespace kiln {
namespace {

TEST(Hash, HexIs32LowercaseDigitsAndRoundTrips) {
  Hash128 h = hash128("kiln");
  std::string hex = h.hex();
  ASSERT_EQ(hex.size(), 32u);
  for (char c : hex) EXPECT_TRUE((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')) << hex;
  auto back = Hash128::from_hex(hex);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(*back, h);
}

TEST(Hash, KnownXxh3Value) {
  // XXH3-128 of the empty input, from the xxHash reference implementation.
  EXPECT_EQ(hash128("").hex(), "99aa06d3014798d86001c324468d497f");
}

TEST(Hash, FromHexRejectsMalformed) {
  EXPECT_FALSE(Hash128::from_hex("abc").has_value());
  EXPECT_FALSE(Hash128::from_hex(std::string(32, 'g')).has_value());
  EXPECT_FALSE(Hash128::from_hex(std::string(33, '0')).has_value());
}

TEST(Hash, FieldsAreLengthPrefixed) {
  Hash128 ab_c = Hasher().field("ab").field("c").finish();
  Hash128 a_bc = Hasher().field("a").field("bc").finish();
  EXPECT_NE(ab_c, a_bc);
  EXPECT_EQ(ab_c, Hasher().field("ab").field("c").finish());
}

TEST(Hash, IntegerFieldDiffersFromItsText) {
  EXPECT_NE(Hasher().field(std::int64_t{7}).finish(), Hasher().field("7").finish());
}

}  // namespace
}  // namespace kiln
