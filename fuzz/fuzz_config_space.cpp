// The config-space JSON reader. Promises (include/kiln/core/config_space.hpp):
// any JSON gives a space or kiln::Error naming the problem, never another
// exception or a crash; a space that was read survives to_json/from_json
// unchanged, and its default (when it has one) is a member.
#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "fuzz_check.hpp"
#include "kiln/core/config_space.hpp"
#include "kiln/core/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using kiln::fuzz::check;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) return 0;  // not JSON: the JSON library's business
  // Two predicates a fuzzed space may name; any other name is an error.
  kiln::ConstraintRegistry registry{
      {"always", [](const kiln::Config&) { return true; }},
      {"small", [](const kiln::Config& c) { return c.to_string().size() < 40; }}};
  kiln::ConfigSpace space;
  try {
    space = kiln::ConfigSpace::from_json(json, registry);
  } catch (const kiln::Error& e) {
    check(std::string_view(e.what()).size() > 0, "an error without a message", text);
    return 0;
  } catch (const std::exception& e) {
    kiln::fuzz::broken(std::string("a non-Kiln exception escaped from_json: ") + e.what(), text);
  }
  try {
    nlohmann::json out = space.to_json();
    kiln::ConfigSpace again = kiln::ConfigSpace::from_json(out, registry);
    check(again.to_json() == out, "a space changed in a JSON round trip", text);
    check(again.cartesian_size() == space.cartesian_size(), "the space size changed", text);
    // Enumerate only small spaces: the fuzzer must stay fast.
    if (space.cartesian_size() <= 4096) {
      auto all = space.enumerate();
      check(all.size() == space.size(), "size() disagrees with enumerate()", text);
      for (const auto& c : all)
        check(space.contains(c), "an enumerated config is not a member", text);
      if (space.has_explicit_default()) {
        check(space.contains(space.default_config()), "the default is not a member", text);
      }
    }
  } catch (const kiln::Error& e) {
    // default_config() of a space with no valid config throws by contract.
    check(space.size() == 0 || space.cartesian_size() > 4096,
          std::string("a read space misbehaves: ") + e.what(), text);
  } catch (const std::exception& e) {
    kiln::fuzz::broken(std::string("a non-Kiln exception from a read space: ") + e.what(), text);
  }
  return 0;
}
