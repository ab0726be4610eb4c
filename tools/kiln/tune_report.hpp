// What `kiln tune` reports: one row per config (status, times, failure
// reason), the winner and its speedup over the default config, and the
// run's statistics, as a table on a terminal or one JSON document.
#pragma once

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kiln/cache/tuning_record.hpp"
#include "kiln/kernels/kernel_call.hpp"
#include "kiln/tuner/tuner.hpp"

namespace kiln::tool {

struct ConfigRow {
  Config config;
  std::string status;  // "ok" or an outcome name ("wrong_result", "timeout", ...)
  std::string reason;  // why not ok
  bool timed = false;  // the times below are known
  double median = 0, min = 0, spread = 0;  // seconds; spread = (p80-p20)/median
  std::size_t reps = 0;
  double compile_seconds = 0;    // its program's wall time (a group's, for a grouped compile)
  double benchmark_seconds = 0;  // its benchmark's wall time

  nlohmann::json to_json() const;
};

struct TuneReport {
  std::string kernel;  // as asked for ("gemm_f32", or the user kernel's name)
  std::string template_name;
  std::string backend;    // "cpu", "cuda"
  nlohmann::json device;  // name, arch
  ShapeDims shape;
  std::vector<std::string> dims;  // the shape's names in the kernel's order (text output)
  std::string dtype;              // empty for user kernels
  std::string source;             // source_name(): "tuned", "disk", "memory", "default", ...
  // What outputs were checked against: "default", "user", "consensus of N
  // configs" or "none" (empty: not known, as for a record of an older Kiln),
  // and which config or code, or why nothing was checked.
  std::string reference;
  std::string reference_detail;
  bool saved = false;            // the winner was written to the tuning cache
  std::string not_saved_reason;  // why not, when tuned and not saved
  nlohmann::json settings;       // the options the run used
  std::vector<ConfigRow> rows;   // ok rows fastest first, then failures
  std::optional<ConfigRow> winner;
  std::optional<ConfigRow> default_row;
  KernelStats stats;
  // Configs skipped because they failed before, and remembered failures
  // measured again because they no longer stood (TuneResult's).
  std::vector<FailedConfig> skipped;
  std::vector<ForgottenFailure> forgotten;
  std::int64_t now = 0;  // Unix seconds the report was made: skipped failures' ages
  // What the user can do about what went wrong ("hint: ..." lines; JSON
  // "hints"), such as a header beside the template that is not searched.
  std::vector<std::string> hints;
  double flops = 0, bytes = 0;  // of one call, when known
  std::string trace_path;

  double speedup() const;  // default median / winner median; 0 when unknown
  nlohmann::json to_json() const;
  void print(std::FILE* out) const;
};

// Rows from a tuning run's measurements, or from a cached record's.
std::vector<ConfigRow> rows_from(const std::vector<Measurement>& measurements);
std::vector<ConfigRow> rows_from(const TuningRecord& record);

// Sorts rows (ok by median, then failures by config) and fills the winner
// and default rows from them.
void finish_report(TuneReport& report, const Config& winner, const Config& default_config);

}  // namespace kiln::tool
