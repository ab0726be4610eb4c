// Measurement: what benchmarking one config produced — its timing statistics,
// or why there are none. A failure is a value with a reason, never an
// unexplained infinite time.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "kiln/core/config.hpp"
#include "kiln/core/error.hpp"

namespace kiln {

enum class Outcome {
  kOk,
  kCompileFailed,  // the compiler rejected the specialisation (log in the error's details)
  kLoadFailed,     // the device refused the binary
  kLaunchFailed,   // the launch returned an error
  kWrongResult,    // output differs from the reference
  kTimeout,        // compile or benchmark passed its deadline and was abandoned
  kCrashed,        // the benchmark worker died (signal, poisoned context)
  kPruned,         // removed before compiling (model, early prune, budget)
  kCancelled,      // the tuning run stopped before reaching it
};

const char* outcome_name(Outcome outcome);
Outcome parse_outcome(std::string_view name);  // throws kiln::Error on an unknown name
// The error code a failure of this kind carries when it has none of its own.
ErrorCode outcome_error_code(Outcome outcome);

// Order statistics of repeated timings, in seconds.
struct TimingStats {
  std::size_t reps = 0;
  double min = 0, median = 0, mean = 0, max = 0;
  double p20 = 0, p80 = 0;
  // (p80 - p20) / median: the relative noise of this measurement.
  double spread = 0;

  // Throws kiln::Error when `seconds` is empty or holds a negative or
  // non-finite value (a broken timer must not produce a winner).
  static TimingStats from_samples(std::vector<double> seconds);
  nlohmann::json to_json() const;
  static TimingStats from_json(const nlohmann::json& json);
};

struct Measurement {
  Config config;
  Outcome outcome = Outcome::kOk;
  // Why it failed, whole: the message and the details (the compiler log and
  // options of a compile error, a worker's exit status); empty when ok.
  // Shorten it where it is printed, never here.
  ErrorInfo error;
  TimingStats stats;           // meaningful only when ok
  double compile_seconds = 0;  // wall time of the program that compiled it
  // Configs in that program (a grouped compile): this config's share of
  // the compile is compile_seconds / group_size.
  std::size_t group_size = 1;
  // Wall time of its benchmark: load, check, warm-up and timed runs (0 when
  // it never reached a benchmark worker).
  double benchmark_seconds = 0;

  double compile_share_seconds() const {
    return compile_seconds / static_cast<double>(group_size ? group_size : 1);
  }

  bool ok() const { return outcome == Outcome::kOk; }
  // error.describe(): the message, then every detail; empty when ok.
  std::string reason() const;
  nlohmann::json to_json() const;
  static Measurement from_json(const nlohmann::json& json);
};

}  // namespace kiln
