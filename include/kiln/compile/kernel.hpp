// Kernel templates: source text plus patterns with `{PARAM}` placeholders
// that a config fills in. specialize(config) gives the Specialization the
// compile stage takes (kiln/compile/compile.hpp).
//
//   KernelTemplate t;
//   t.name = "axpy";
//   t.source = "template <int N> __global__ void axpy(float* y) { ... }";
//   t.entry = "axpy<{N}>";
//   t.space.param("N", {1, 2, 4});
//   Specialization s = t.specialize(Config{{"N", std::int64_t{2}}});  // s.entry == "axpy<2>"
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/compile/compile.hpp"
#include "kiln/core/config.hpp"
#include "kiln/core/config_space.hpp"
#include "kiln/core/hash.hpp"

namespace kiln {

// One `{NAME}` in a pattern. NAME is a C identifier; `{{` and `}}` stand for
// literal braces (so `{{` never starts a placeholder).
struct Placeholder {
  std::string name;
  std::size_t offset = 0;  // of the opening brace
  std::size_t length = 0;  // including both braces
};

// Throws kiln::Error (kInvalidArgument) naming the pattern and the offset for
// an unterminated `{`, an empty or non-identifier name, or a lone `}`.
std::vector<Placeholder> parse_placeholders(std::string_view pattern);

// Replaces each placeholder with value_text() of the config's value and
// un-escapes `{{`/`}}`. Throws kiln::Error naming the placeholder and the
// pattern when the config has no such parameter.
std::string substitute(std::string_view pattern, const Config& config);

struct KernelTemplate {
  std::string name;         // unique among the templates a program uses
  std::string description;  // one line, for `kiln compile` and docs
  std::string source;       // shared by every specialization; no placeholders
  // The entry expression, with placeholders: "kiln::gemm<{BM},{BN},{BK}>".
  std::string entry;
  // NAME -> value pattern, e.g. {"KILN_SWIZZLE", "{SWIZZLE}"}: a config that
  // changes a define compiles in a program of its own.
  std::map<std::string, std::string> defines;
  std::vector<std::string> options;  // compile options (placeholders allowed)
  std::vector<Header> headers;       // in-memory headers the source includes
  std::vector<std::string> include_dirs;
  ConfigSpace space;

  // Checks every pattern against the space. Throws kiln::Error when a
  // placeholder names no parameter of the space (naming both, and the fix).
  // Returns the parameters no pattern uses: legal (a constraint or the
  // launch rule may read them) but often a typo, so specialize() warns once.
  std::vector<std::string> check() const;

  // The specialization for `config`. Throws kiln::Error when the config is
  // outside the space (unknown, missing or out-of-range parameter, or a
  // violated constraint, each named) or a pattern is malformed.
  Specialization specialize(const Config& config) const;

  // specialize() for every config of the space, in enumeration order.
  std::vector<Specialization> specialize_all() const;
};

// A content hash of everything in the template that changes what it
// computes or how fast: source, entry, defines, options, in-memory headers,
// include directories and the files under them, and the space as JSON
// (parameters, values, constraint names, default). Not the name (the
// problem key has it) nor the description. A constraint's predicate is
// code, hashed by its name only: TunableKernel::version covers the rest.
Hash128 template_hash(const KernelTemplate& t);

}  // namespace kiln
