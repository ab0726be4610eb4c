// Misuse of an API is refused with a kiln::Error of kInvalidArgument whose
// message says what to do: the check the registration tests make of each
// refusal (tests/search/extending_strategy_test.cpp,
// tests/cache/extending_tier_test.cpp).
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "kiln/core/error.hpp"

namespace kiln::testing {

// Runs `call`: it must throw kInvalidArgument with `says` in the message.
template <class Call>
void expect_refused(Call&& call, const std::string& says) {
  try {
    call();
    ADD_FAILURE() << "not refused; expected an error saying: " << says;
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument) << e.what();
    EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
  }
}

}  // namespace kiln::testing
