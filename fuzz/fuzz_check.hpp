// What a fuzz target does when an input breaks a promise the reader makes:
// print the input's evidence and abort, so libFuzzer saves the input as a
// crash artifact.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace kiln::fuzz {

[[noreturn]] inline void broken(std::string_view what, std::string_view input) {
  std::fprintf(stderr, "fuzz: %.*s\ninput (%zu bytes): %.*s\n", static_cast<int>(what.size()),
               what.data(), input.size(), static_cast<int>(input.size() < 400 ? input.size() : 400),
               input.data());
  std::abort();
}

inline void check(bool ok, std::string_view what, std::string_view input) {
  if (!ok) broken(what, input);
}

}  // namespace kiln::fuzz
