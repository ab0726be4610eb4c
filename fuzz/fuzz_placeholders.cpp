// The template placeholder parser. Promises (include/kiln/compile/kernel.hpp): a
// pattern parses into placeholders that lie inside it and read `{NAME}`, or
// kiln::Error naming the problem; substituting a config that has every name
// leaves no unescaped brace behind.
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>
#include <string_view>

#include "fuzz_check.hpp"
#include "kiln/compile/kernel.hpp"
#include "kiln/core/config.hpp"
#include "kiln/core/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using kiln::fuzz::check;
  std::string_view pattern(reinterpret_cast<const char*>(data), size);
  std::vector<kiln::Placeholder> found;
  try {
    found = kiln::parse_placeholders(pattern);
  } catch (const kiln::Error& e) {
    check(std::string_view(e.what()).size() > 0, "an error without a message", pattern);
    return 0;
  } catch (const std::exception& e) {
    kiln::fuzz::broken(std::string("a non-Kiln exception: ") + e.what(), pattern);
  }
  kiln::Config config;
  std::size_t previous_end = 0;
  for (const auto& p : found) {
    check(p.offset >= previous_end, "placeholders overlap or go backwards", pattern);
    check(p.length == p.name.size() + 2 && p.offset + p.length <= pattern.size(),
          "a placeholder's extent is wrong", pattern);
    check(pattern[p.offset] == '{' && pattern[p.offset + p.length - 1] == '}' &&
              pattern.substr(p.offset + 1, p.name.size()) == p.name,
          "a placeholder does not read {NAME} at its offset", pattern);
    check(!p.name.empty() && !std::isdigit(static_cast<unsigned char>(p.name[0])),
          "a placeholder name that is not an identifier", pattern);
    previous_end = p.offset + p.length;
    config.set(p.name, kiln::Value(std::int64_t{7}));
  }
  try {
    std::string out = kiln::substitute(pattern, config);
    // Every placeholder became "7"; only escaped braces turned into braces.
    check(out.size() <= pattern.size() + found.size(), "substitution grew beyond its values",
          pattern);
  } catch (const std::exception& e) {
    kiln::fuzz::broken(std::string("substitute refused a pattern parse accepted: ") + e.what(),
                       pattern);
  }
  return 0;
}
