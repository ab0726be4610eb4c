// The integer expressions of launch rules, shapes and constraints.
#include "kiln/kernels/int_expr.hpp"

#include <gtest/gtest.h>

#include "kiln/core/error.hpp"

namespace kiln {
namespace {

std::int64_t eval(const char* text, const ExprVars& vars = {}) {
  return IntExpr::parse(text).eval(vars);
}

std::string error_of(const char* text, const ExprVars& vars = {}) {
  try {
    (void)eval(text, vars);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(IntExpr, ArithmeticFollowsCPrecedence) {
  EXPECT_EQ(eval("1 + 2 * 3"), 7);
  EXPECT_EQ(eval("(1 + 2) * 3"), 9);
  EXPECT_EQ(eval("10 - 4 - 3"), 3);
  EXPECT_EQ(eval("7 / 2"), 3);
  EXPECT_EQ(eval("-7 / 2"), -3);
  EXPECT_EQ(eval("7 % 3"), 1);
  EXPECT_EQ(eval("-3 + +4"), 1);
  EXPECT_EQ(eval("2 * 3 * 4 * 5"), 120);
}

TEST(IntExpr, ComparisonsAndLogicGiveZeroOrOne) {
  EXPECT_EQ(eval("3 <= 3"), 1);
  EXPECT_EQ(eval("3 < 3"), 0);
  EXPECT_EQ(eval("4 >= 5"), 0);
  EXPECT_EQ(eval("4 > 3 && 2 != 2"), 0);
  EXPECT_EQ(eval("4 > 3 || 2 != 2"), 1);
  EXPECT_EQ(eval("!0 + !5"), 1);
  EXPECT_EQ(eval("1 + 1 == 2"), 1);
  EXPECT_EQ(eval("T * T * 4 <= 16384", {{"T", 64}}), 1);
  EXPECT_EQ(eval("T * T * 4 <= 16384", {{"T", 128}}), 0);
}

TEST(IntExpr, VariablesAndFunctions) {
  const ExprVars vars = {{"N", 1000}, {"BN", 64}, {"M", 7}};
  EXPECT_EQ(eval("ceil_div(N, BN)", vars), 16);
  EXPECT_EQ(eval("round_up(N, BN)", vars), 1024);
  EXPECT_EQ(eval("min(N, BN, M)", vars), 7);
  EXPECT_EQ(eval("max(M, 3)", vars), 7);
  EXPECT_EQ(eval("ceil_div(0, 4)"), 0);
  auto e = IntExpr::parse("ceil_div(N, BN) * M + N");
  EXPECT_EQ(e.variables(), (std::vector<std::string>{"BN", "M", "N"}));
  EXPECT_EQ(e.text(), "ceil_div(N, BN) * M + N");
  EXPECT_EQ(IntExpr::constant(5).eval({}), 5);
}

TEST(IntExpr, SyntaxErrorsNameTheOffsetAndTheText) {
  const std::string unclosed = error_of("ceil_div(N, BN");
  EXPECT_NE(unclosed.find("'ceil_div(N, BN'"), std::string::npos) << unclosed;
  EXPECT_NE(unclosed.find("offset 14"), std::string::npos) << unclosed;
  EXPECT_NE(error_of("1 +").find("expected a number"), std::string::npos);
  EXPECT_NE(error_of("2.5 * N").find("integer"), std::string::npos);
  EXPECT_NE(error_of("N N").find("expected an operator"), std::string::npos);
  EXPECT_NE(error_of("a = 3").find("offset 2"), std::string::npos);
  EXPECT_NE(error_of("").find("expected a number"), std::string::npos);
  EXPECT_NE(error_of("99999999999999999999").find("64 bits"), std::string::npos);
}

TEST(IntExpr, EvaluationErrorsAreNamed) {
  const std::string unknown = error_of("N + Q", {{"N", 1}});
  EXPECT_NE(unknown.find("unknown name 'Q'"), std::string::npos) << unknown;
  EXPECT_NE(unknown.find("known: N"), std::string::npos) << unknown;
  EXPECT_NE(error_of("4 / (2 - 2)").find("division by zero"), std::string::npos);
  EXPECT_NE(error_of("4 % 0").find("division by zero"), std::string::npos);
  EXPECT_NE(error_of("9223372036854775807 + 1").find("overflows"), std::string::npos);
  EXPECT_NE(error_of("4294967296 * 4294967296").find("overflows"), std::string::npos);
  EXPECT_NE(error_of("ceil_div(4, 0)").find("positive divisor"), std::string::npos);
  EXPECT_NE(error_of("ceil_div(4)").find("takes 2 arguments"), std::string::npos);
  EXPECT_NE(error_of("pow(2, 3)").find("unknown function 'pow'"), std::string::npos);
}

// Every operator that can leave 64 bits says so instead of wrapping: a
// wrapped size would become a small buffer or a negative grid.
TEST(IntExpr, EveryOverflowIsAnErrorNotAWrap) {
  const ExprVars big = {{"M", 4294967296}, {"N", INT64_MAX}};
  for (const char* text :
       {"N + 1", "-N - 2", "M * M", "M * M * 4", "round_up(N, 4096)", "-(-N - 1)", "(-N - 1) / -1",
        "(-N - 1) % -1", "N * 2 / 2", "max(N, 1) + min(N, N)"}) {
    const std::string error = error_of(text, big);
    EXPECT_NE(error.find("overflows 64-bit integers"), std::string::npos) << text << ": " << error;
    EXPECT_NE(error.find(text), std::string::npos) << "names the expression: " << error;
  }
  // At the edge, not past it: exact results.
  EXPECT_EQ(IntExpr::parse("ceil_div(N, 2)").eval(big), INT64_MAX / 2 + 1);
  EXPECT_EQ(IntExpr::parse("N - 1 + 1").eval(big), INT64_MAX);
  EXPECT_EQ(IntExpr::parse("M * 2147483647").eval(big), 4294967296 * 2147483647);
}

}  // namespace
}  // namespace kiln
