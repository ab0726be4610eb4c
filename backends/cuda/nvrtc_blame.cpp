// Attributing a failed grouped NVRTC program to its specializations from the
// log alone. NVRTC (EDG) follows every error inside a template with
//   detected during instantiation of "void kiln::gemm<BM,...>(...) [with BM=64, BN=128, ...]"
// so the bindings name the broken config. Only a hint: the engine confirms
// each blamed specialization by compiling it alone, and splits the program
// when the log names none.
#include <algorithm>
#include <cstdlib>
#include <set>
#include <sstream>

#include "nvrtc_compiler.hpp"

namespace kiln::cuda {

namespace {

// Splits at commas outside <>, () and [].
std::vector<std::string> split_top_level(std::string_view text) {
  std::vector<std::string> out;
  int depth = 0;
  std::string cur;
  for (char c : text) {
    if (c == '<' || c == '(' || c == '[') ++depth;
    if (c == '>' || c == ')' || c == ']') --depth;
    if (c == ',' && depth == 0) {
      out.push_back(cur);
      cur.clear();
      continue;
    }
    cur.push_back(c);
  }
  if (!cur.empty()) out.push_back(cur);
  for (auto& s : out) {
    const auto b = s.find_first_not_of(' ');
    const auto e = s.find_last_not_of(' ');
    s = b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
  }
  return out;
}

// "64", "64U", "(int)64", "true" -> a canonical word; empty if not a literal.
std::string literal(std::string_view text) {
  std::string s(text);
  if (s.size() > 2 && s.front() == '(' && s.find(')') != std::string::npos) {
    s = s.substr(s.find(')') + 1);
  }
  if (s == "true" || s == "false") return s;
  while (!s.empty() && (s.back() == 'U' || s.back() == 'L' || s.back() == 'u' || s.back() == 'l')) {
    s.pop_back();
  }
  if (s.empty()) return {};
  char* end = nullptr;
  const long long v = std::strtoll(s.c_str(), &end, 0);
  if (end == nullptr || *end != '\0') return {};
  return std::to_string(v);
}

using Bindings = std::vector<std::pair<std::string, std::string>>;

// Every "[with A=1, B=2]" list that follows "instantiation of" in the log.
std::vector<Bindings> instantiation_bindings(const std::string& log) {
  std::vector<Bindings> out;
  std::istringstream in(log);
  for (std::string line; std::getline(in, line);) {
    if (line.find("instantiation of") == std::string::npos) continue;
    const auto open = line.find("[with ");
    const auto close = line.rfind(']');
    if (open == std::string::npos || close == std::string::npos || close < open) continue;
    Bindings b;
    for (const auto& item : split_top_level(line.substr(open + 6, close - open - 6))) {
      const auto eq = item.find('=');
      if (eq == std::string::npos) continue;
      b.emplace_back(item.substr(0, eq), item.substr(eq + 1));
    }
    if (!b.empty()) out.push_back(std::move(b));
  }
  return out;
}

// The template arguments of the outermost <...> of an entry expression.
std::vector<std::string> entry_arguments(const std::string& entry) {
  const auto open = entry.find('<');
  const auto close = entry.rfind('>');
  if (open == std::string::npos || close == std::string::npos || close < open) return {};
  return split_top_level(std::string_view(entry).substr(open + 1, close - open - 1));
}

bool matches(const Specialization& s, const Bindings& bindings) {
  // By name: the template's parameters are usually named like the config's.
  int compared = 0;
  for (const auto& [name, value] : bindings) {
    if (!s.config.has(name)) continue;
    const std::string want = literal(value_text(s.config.at(name)));
    const std::string got = literal(value);
    if (want.empty() || got.empty()) continue;
    if (want != got) return false;
    ++compared;
  }
  if (compared > 0) return true;
  // By position against the entry's literal arguments.
  const auto args = entry_arguments(s.entry);
  if (args.size() != bindings.size()) return false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string want = literal(args[i]);
    const std::string got = literal(bindings[i].second);
    if (want.empty() || got.empty()) continue;
    if (want != got) return false;
    ++compared;
  }
  return compared > 0;
}

}  // namespace

std::vector<std::size_t> NvrtcCompiler::blame(const CompileUnit& unit,
                                              const std::string& log) const {
  std::set<std::size_t> blamed;
  for (const Bindings& b : instantiation_bindings(log)) {
    std::vector<std::size_t> hit;
    for (std::size_t i = 0; i < unit.specializations.size(); ++i) {
      if (matches(unit.specializations[i], b)) hit.push_back(i);
    }
    // A list every specialization matches (a helper instantiated with a
    // shared value) says nothing about which one broke.
    if (hit.size() == unit.specializations.size()) continue;
    blamed.insert(hit.begin(), hit.end());
  }
  return {blamed.begin(), blamed.end()};
}

}  // namespace kiln::cuda
