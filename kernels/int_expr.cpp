// A recursive-descent parser into a small tree, and a checked evaluator.
// Every error names the whole expression, so a bad launch rule in a JSON
// file can be found from the message alone.
#include "kiln/kernels/int_expr.hpp"

#include <algorithm>
#include <cctype>
#include <optional>
#include <set>

#include "kiln/core/checked_math.hpp"
#include "kiln/core/error.hpp"

namespace kiln {

struct IntExpr::Node {
  enum class Kind { kNumber, kVariable, kUnary, kBinary, kCall };
  Kind kind = Kind::kNumber;
  std::int64_t number = 0;
  std::string name;  // variable, function, or operator ("-", "<=", ...)
  std::vector<std::shared_ptr<const Node>> children;
};

namespace {

using NodePtr = std::shared_ptr<const IntExpr::Node>;
using Kind = IntExpr::Node::Kind;

[[noreturn]] void fail(std::string_view text, const std::string& what) {
  throw Error(ErrorCode::kInvalidArgument,
              "integer expression '" + std::string(text) + "': " + what);
}

NodePtr make(Kind kind, std::string name, std::vector<NodePtr> children = {},
             std::int64_t number = 0) {
  auto n = std::make_shared<IntExpr::Node>();
  n->kind = kind;
  n->name = std::move(name);
  n->children = std::move(children);
  n->number = number;
  return n;
}

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  NodePtr parse() {
    NodePtr root = parse_or();
    skip_space();
    if (pos_ != text_.size()) expected("an operator or the end");
    return root;
  }

 private:
  [[noreturn]] void expected(const std::string& what) {
    std::string found = pos_ < text_.size() ? "'" + std::string(1, text_[pos_]) + "'" : "the end";
    fail(text_, "expected " + what + " at offset " + std::to_string(pos_) + ", found " + found);
  }
  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  // Consumes `op` when it comes next (and is not the prefix of a longer one
  // in `longer`, such as '<' of '<=').
  bool take(std::string_view op, std::string_view longer = {}) {
    skip_space();
    if (text_.substr(pos_, op.size()) != op) return false;
    if (!longer.empty() && text_.substr(pos_, longer.size()) == longer) return false;
    pos_ += op.size();
    return true;
  }

  NodePtr binary_chain(NodePtr (Parser::*next)(), std::initializer_list<std::string_view> ops) {
    NodePtr left = (this->*next)();
    for (;;) {
      bool matched = false;
      for (std::string_view op : ops) {
        if (take(op)) {
          left = make(Kind::kBinary, std::string(op), {left, (this->*next)()});
          matched = true;
          break;
        }
      }
      if (!matched) return left;
    }
  }

  NodePtr parse_or() { return binary_chain(&Parser::parse_and, {"||"}); }
  NodePtr parse_and() { return binary_chain(&Parser::parse_cmp, {"&&"}); }
  NodePtr parse_cmp() {
    NodePtr left = parse_sum();
    for (std::string_view op : {"<=", ">=", "==", "!=", "<", ">"}) {
      if (take(op)) return make(Kind::kBinary, std::string(op), {left, parse_sum()});
    }
    return left;
  }
  NodePtr parse_sum() { return binary_chain(&Parser::parse_product, {"+", "-"}); }
  NodePtr parse_product() { return binary_chain(&Parser::parse_unary, {"*", "/", "%"}); }
  NodePtr parse_unary() {
    if (take("!", "!=")) return make(Kind::kUnary, "!", {parse_unary()});
    if (take("-")) return make(Kind::kUnary, "-", {parse_unary()});
    if (take("+")) return parse_unary();
    return parse_primary();
  }
  NodePtr parse_primary() {
    skip_space();
    if (pos_ >= text_.size()) expected("a number, a name or '('");
    const char c = text_[pos_];
    if (std::isdigit(static_cast<unsigned char>(c))) {
      std::int64_t value = 0;
      while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
        const auto next = checked_mul<std::int64_t>(value, 10);
        const auto sum = next ? checked_add<std::int64_t>(*next, text_[pos_] - '0') : next;
        if (!sum)
          fail(text_, "the number at offset " + std::to_string(pos_) + " does not fit 64 bits");
        value = *sum;
        ++pos_;
      }
      if (pos_ < text_.size() && (std::isalpha(static_cast<unsigned char>(text_[pos_])) ||
                                  text_[pos_] == '.' || text_[pos_] == '_')) {
        expected("an integer (no fractions, suffixes or exponents)");
      }
      return make(Kind::kNumber, "", {}, value);
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      const std::size_t start = pos_;
      while (pos_ < text_.size() &&
             (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_')) {
        ++pos_;
      }
      std::string name(text_.substr(start, pos_ - start));
      if (!take("(")) return make(Kind::kVariable, std::move(name));
      std::vector<NodePtr> args{parse_or()};
      while (take(",")) args.push_back(parse_or());
      if (!take(")")) expected("',' or ')' closing " + name + "(");
      return make(Kind::kCall, std::move(name), std::move(args));
    }
    if (take("(")) {
      NodePtr inner = parse_or();
      if (!take(")")) expected("')'");
      return inner;
    }
    expected("a number, a name or '('");
  }

  std::string_view text_;
  std::size_t pos_ = 0;
};

struct Evaluator {
  std::string_view text;
  const ExprVars& vars;

  std::int64_t checked(std::optional<std::int64_t> r, const std::string& op) const {
    if (!r) fail(text, "'" + op + "' overflows 64-bit integers");
    return *r;
  }

  std::int64_t call(const IntExpr::Node& n) const {
    std::vector<std::int64_t> a;
    for (const auto& c : n.children) a.push_back(eval(*c));
    auto need = [&](std::size_t count) {
      if (a.size() != count) {
        fail(text, n.name + "() takes " + std::to_string(count) + " arguments, got " +
                       std::to_string(a.size()));
      }
    };
    if (n.name == "ceil_div" || n.name == "round_up") {
      need(2);
      if (a[1] <= 0)
        fail(text, n.name + "() needs a positive divisor, got " + std::to_string(a[1]));
      if (a[0] < 0) fail(text, n.name + "() needs a non-negative dividend");
      const std::int64_t q = ceil_div_nonneg(a[0], a[1]);
      if (n.name == "ceil_div") return q;
      return checked(checked_mul(q, a[1]), "round_up");
    }
    if (n.name == "min") return *std::min_element(a.begin(), a.end());
    if (n.name == "max") return *std::max_element(a.begin(), a.end());
    fail(text, "unknown function '" + n.name + "': use ceil_div, round_up, min or max");
  }

  std::int64_t binary(const std::string& op, std::int64_t x, std::int64_t y) const {
    if (op == "+") return checked(checked_add(x, y), op);
    if (op == "-") return checked(checked_sub(x, y), op);
    if (op == "*") return checked(checked_mul(x, y), op);
    if (op == "/" || op == "%") {
      if (y == 0) fail(text, "division by zero");
      if (x == INT64_MIN && y == -1) fail(text, "'" + op + "' overflows 64-bit integers");
      return op == "/" ? x / y : x % y;
    }
    if (op == "<") return x < y;
    if (op == "<=") return x <= y;
    if (op == ">") return x > y;
    if (op == ">=") return x >= y;
    if (op == "==") return x == y;
    if (op == "!=") return x != y;
    if (op == "&&") return x && y;
    if (op == "||") return x || y;
    fail(text, "internal: unknown operator " + op);
  }

  std::int64_t eval(const IntExpr::Node& n) const {
    switch (n.kind) {
      case Kind::kNumber:
        return n.number;
      case Kind::kVariable: {
        auto it = vars.find(n.name);
        if (it != vars.end()) return it->second;
        std::string known;
        for (const auto& [k, v] : vars) known += (known.empty() ? "" : ", ") + k;
        fail(text,
             "unknown name '" + n.name + "' (known: " + (known.empty() ? "none" : known) + ")");
      }
      case Kind::kUnary: {
        const std::int64_t v = eval(*n.children[0]);
        if (n.name == "!") return !v;
        if (v == INT64_MIN) fail(text, "'-' overflows 64-bit integers");
        return -v;
      }
      case Kind::kBinary:
        return binary(n.name, eval(*n.children[0]), eval(*n.children[1]));
      case Kind::kCall:
        return call(n);
    }
    fail(text, "internal: bad node");
  }
};

void collect(const IntExpr::Node& n, std::set<std::string>& out) {
  if (n.kind == Kind::kVariable) out.insert(n.name);
  for (const auto& c : n.children) collect(*c, out);
}

}  // namespace

IntExpr::IntExpr() : root_(make(Kind::kNumber, "")), text_("0") {}

IntExpr IntExpr::constant(std::int64_t value) {
  IntExpr e;
  e.root_ = make(Kind::kNumber, "", {}, value);
  e.text_ = std::to_string(value);
  return e;
}

IntExpr IntExpr::parse(std::string_view text) {
  IntExpr e;
  e.root_ = Parser(text).parse();
  e.text_ = std::string(text);
  return e;
}

std::int64_t IntExpr::eval(const ExprVars& vars) const {
  return Evaluator{text_, vars}.eval(*root_);
}

std::vector<std::string> IntExpr::variables() const {
  std::set<std::string> names;
  collect(*root_, names);
  return {names.begin(), names.end()};
}

ExprVars config_vars(const Config& config) {
  ExprVars vars;
  for (const auto& [name, value] : config.values()) {
    if (const auto* i = std::get_if<std::int64_t>(&value)) vars[name] = *i;
    if (const auto* b = std::get_if<bool>(&value)) vars[name] = *b ? 1 : 0;
  }
  return vars;
}

}  // namespace kiln
