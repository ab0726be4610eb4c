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

// After a run cut short (Ctrl-C, SIGTERM, a hook's interrupt): what it
// measured is still logged, each line marked "interrupted", and the print
// says no winner was saved; the journal lets the next run resume.
void report_interrupted(const std::string& kernel, const ProblemKey& problem,
                        const TuneResult& partial, const Options& env);

// One run's measurements as JSON lines (kernel, key, run id, config, status,
// median seconds or the reason; "interrupted": true for a run cut short),
// each appended with one write() to a file opened O_APPEND, so lines from
// concurrent processes never interleave.
Status append_measurements(const std::string& path, const std::string& kernel,
                           const ProblemKey& problem, const TuneResult& result,
                           bool interrupted = false);

// The line KILN_PRINT_AUTOTUNING prints (Triton's "finished after ...; best
// config selected"): kernel, key, winner, its time, configs measured.
std::string decision_line(const std::string& kernel, const ProblemKey& problem,
                          const TuneResult& result);

}  // namespace kiln::internal
