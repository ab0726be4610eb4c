// The two cache keys. Each is XXH3-128 over length-prefixed fields, so no
// two different inputs can be confused by concatenation.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "kiln/core/fingerprint.hpp"
#include "kiln/core/hash.hpp"
#include "kiln/core/options.hpp"
#include "kiln/core/problem.hpp"

namespace kiln {

// Identity of a compiled artifact: the same inputs give the same binary.
// `source` is the specialised source with the content of every header it
// includes folded in by the caller.
Hash128 artifact_key(const ToolchainFingerprint& toolchain, std::string_view source,
                     const std::vector<std::string>& options, std::string_view entry,
                     std::string_view arch, const EnvSnapshot& env);

// Identity of a tuning decision: the winner for this problem on this arch
// with this toolchain and environment, for the kernel whose definition hash
// (kiln/tuner/tuner.hpp, definition_hash) is `definition`.
Hash128 tuning_key(const ProblemKey& problem, std::string_view arch,
                   const ToolchainFingerprint& toolchain, const EnvSnapshot& env,
                   const Hash128& definition);

}  // namespace kiln
