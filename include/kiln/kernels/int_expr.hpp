// Small integer expressions over named variables, for the parts of a kernel
// description that are data, not code: launch geometry ("ceil_div(N, BN)"),
// tensor shapes ("M * K"), constraints ("BM * BN * 4 <= 32768") and early
// prunes ("BM <= M"). Parsed once, evaluated per config and call; nothing is
// ever compiled or executed.
//
//   IntExpr grid_x = IntExpr::parse("ceil_div(N, BN)");
//   std::int64_t x = grid_x.eval({{"N", 1000}, {"BN", 64}});  // 16
//
// Grammar (C precedence, 64-bit signed arithmetic, overflow is an error):
//   expr    := or
//   or      := and ('||' and)*
//   and     := cmp ('&&' cmp)*
//   cmp     := sum (('<' | '<=' | '>' | '>=' | '==' | '!=') sum)?
//   sum     := product (('+' | '-') product)*
//   product := unary (('*' | '/' | '%') unary)*
//   unary   := ('-' | '+' | '!') unary | primary
//   primary := INTEGER | NAME | NAME '(' expr (',' expr)* ')' | '(' expr ')'
// Functions: ceil_div(a, b), round_up(a, b), min(a, b, ...), max(a, b, ...).
// Comparisons and logic give 0 or 1; `/` and `%` truncate toward zero.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/core/config.hpp"

namespace kiln {

// Variable values by name: shape dimensions and integer (or bool) config
// parameters.
using ExprVars = std::map<std::string, std::int64_t, std::less<>>;

class IntExpr {
 public:
  struct Node;

  IntExpr();  // the constant 0
  static IntExpr constant(std::int64_t value);
  // Throws kiln::Error (kInvalidArgument) naming the text, the offset and
  // what was expected, e.g. "expected ')' at offset 12 of 'ceil_div(N, BN'".
  static IntExpr parse(std::string_view text);

  // Throws kiln::Error naming the expression for an unknown variable (and
  // the known ones), a division by zero, an overflow or an unknown function.
  std::int64_t eval(const ExprVars& vars) const;
  // Every variable name the expression reads, sorted, without repeats.
  std::vector<std::string> variables() const;
  const std::string& text() const { return text_; }

 private:
  std::shared_ptr<const Node> root_;
  std::string text_;
};

// A config's integer and bool parameters (bools as 0 and 1), as variables.
ExprVars config_vars(const Config& config);

}  // namespace kiln
