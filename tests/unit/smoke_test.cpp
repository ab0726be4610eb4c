#include <gtest/gtest.h>
#include "kiln/fingerprint.hpp"
TEST(Smoke, Version) {
  EXPECT_STREQ(kiln::kiln_version(), "0.1.0");
}
