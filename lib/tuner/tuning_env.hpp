// What KILN_PRINT_AUTOTUNING and KILN_AUTOTUNE_LOG ask of a tuning run
// (kiln/core/options.hpp): a line on stderr per decision, and every
// measurement appended to a file as JSON lines.
#pragma once

#include <string>

#include "kiln/core/options.hpp"
#include "kiln/core/problem.hpp"
#include "kiln/tuner/tuner.hpp"

namespace kiln::internal {

// After a tuning run of `kernel` for `problem`: its decision printed, its
// measurements logged, as `env` asks. An error result is neither.
void report_tuning(const std::string& kernel, const ProblemKey& problem,
                   const Result<TuneResult>& result, const Options& env);

// One run's measurements as JSON lines (kernel, key, run id, config, status,
// median seconds or the reason), each appended with one write() to a file
// opened O_APPEND, so lines from concurrent processes never interleave.
Status append_measurements(const std::string& path, const std::string& kernel,
                           const ProblemKey& problem, const TuneResult& result);

// The line KILN_PRINT_AUTOTUNING prints (Triton's "finished after ...; best
// config selected"): kernel, key, winner, its time, configs measured.
std::string decision_line(const std::string& kernel, const ProblemKey& problem,
                          const TuneResult& result);

}  // namespace kiln::internal
