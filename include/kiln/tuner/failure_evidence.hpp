// Whether a remembered failure still stands (docs/autotuning.md, "Across
// tunings: warm start, finalists, remembered failures", "Remembered
// failures"). The failure key (failed_configs.hpp) holds the kernel's
// definition, device, toolchain and environment; what it cannot hold is
// checked here, each time the failure is recalled:
// - a compile failure remembers the paths where the compiler looked for a
//   header and did not find it: once one of them is there, the failure is
//   forgotten; and the files its diagnostics named, by content: once one
//   changes or goes, likewise;
// - a failure that depends on the moment (a timeout, a crash, a load or
//   launch error: memory pressure, a busy device, a worker that could not
//   start) is retried after kRetryAfterRuns runs have skipped it or
//   kRetryAfterSeconds have passed, whichever comes first.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "kiln/cache/failed_configs.hpp"

namespace kiln::internal {

// Runs that skip a moment's failure before it is tried again: a config that
// times out on a loaded machine costs its timeout once in four runs.
inline constexpr int kRetryAfterRuns = 3;
// And at the latest a week after it failed.
inline constexpr std::int64_t kRetryAfterSeconds = 7 * 24 * 3600;

// Whether a failure of this outcome (outcome_name()) can pass with the
// moment: the retry bounds above apply to it.
bool momentary_outcome(const std::string& outcome);

// The #include names a compile log reports missing, in the order it names
// them, each once.
std::vector<std::string> missing_headers(const std::string& log);

// Adds to `failure` what its compile log says it depended on: the #include
// names reported missing (Clang's "'x.h' file not found", NVRTC's "cannot
// open source file \"x.h\"", GCC's "x.h: No such file or directory") and
// each place they may be looked for (under `include_dirs`, then `cwd`, where
// NVRTC resolves a relative name) that holds no file now, as witnesses of
// absence; and the existing files the diagnostics name, by content.
void add_compile_evidence(FailedConfig& failure, const std::string& log,
                          const std::vector<std::string>& include_dirs,
                          const std::filesystem::path& cwd);

// Why `failure` no longer stands at Unix time `now`: a witnessed file
// appeared, changed or went, or a momentary failure is due for a retry;
// nullopt while it stands.
std::optional<std::string> failure_gone(const FailedConfig& failure, std::int64_t now);

// The content digest a witness holds for `path`: empty when there is no
// regular file there (or it cannot be read).
std::string file_digest(const std::filesystem::path& path);

// Unix seconds now.
std::int64_t unix_now();

}  // namespace kiln::internal
