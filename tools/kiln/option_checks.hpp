// Bounds for the numeric options of every `kiln` subcommand, the same
// ranges the KILN_* variables have (lib/core/options.cpp). Each check reads
// the text before CLI11 converts it: CLI11 2.1 reads integers with
// strtoull(.., 0), so "-1" would wrap into an unsigned field and "010"
// would be octal; "nan" passes every comparison. A value out of range is a
// usage error (exit 2) whose message names the option and the range:
//   --threads: 100000 is out of range: must be between 0 and 1024 (0: one per core)
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <vector>

namespace kiln::tool {

// A decimal integer in [lo, hi]; rewritten without leading zeros, so CLI11
// reads what the check read. `meaning` explains special values ("0: all").
CLI::Validator integer_in(std::int64_t lo, std::uint64_t hi, const std::string& meaning = "");

// A finite decimal number in [lo, hi] (no nan, inf or hex floats).
CLI::Validator number_in(double lo, double hi, const std::string& meaning = "");

// A size such as 512M, 4G or a byte count (kiln/core/options.hpp parse_size).
CLI::Validator size_text();

// A file to write: a non-empty path that is not a directory, in a directory
// that exists (checked before anything runs, not after the work is done).
CLI::Validator output_file();

// A search strategy: auto or a registered name; with `with_list`, also
// list and help (`kiln tune --search list`). Anything else names the valid
// ones.
CLI::Validator search_name(bool with_list);

// Refuses --in-flight and --rounds (usage error, exit 2) when every one of
// `searches` is a strategy they do not pace (exhaustive, random): they were
// silently ignored there. auto may plan a steered search, so it passes, as
// does an empty list (every strategy).
void pacing_needs_steering(const CLI::App& cmd, const std::vector<std::string>& searches);

// A CUDA target: sm_NN or compute_NN with an optional letter (sm_90a), or
// native (as KILN_ARCH).
CLI::Validator cuda_arch();

// The ranges shared by several subcommands, in one place.
inline constexpr std::int64_t kMaxThreads = 1024;   // as KILN_COMPILE_THREADS
inline constexpr std::int64_t kMaxGroupSize = 256;  // as KILN_GROUP_SIZE
inline constexpr std::int64_t kMaxConfigs = 1'000'000'000;
inline constexpr double kMaxBudgetSeconds = 1e6;  // about 11 days
// `kiln bench tune`: --size (a 16384^3 GEMM already needs 3 GiB), --rounds
// and --bench-ms (the kernel time each config is calibrated to).
inline constexpr std::int64_t kMaxBenchSize = 16384;
inline constexpr std::int64_t kMaxRounds = 1000;
inline constexpr double kMaxBenchMs = 60'000;
// Enough to hide any launch overhead, far below every benchmark deadline.
inline constexpr double kMaxDelayMicroseconds = 10'000;

}  // namespace kiln::tool
