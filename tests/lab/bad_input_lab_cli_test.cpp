// Bad input to `kiln-lab` is a usage error naming the option and its
// limit (exit 2, nothing on stdout, nothing cached), as it is for `kiln`
// (tests/kernels/bad_input_cli_test.cpp).
#include "lab_cli.hpp"

namespace kiln {
namespace {

// Any existing file passes --recorded's own check; the option after it fails first.
const std::string kReadme = std::string(KILN_SOURCE_DIR) + "/README.md";
const std::string kBenchSearch = "bench search --recorded " + kReadme + " ";
const std::string kTuneRecorded = "tune --recorded " + kReadme + " ";

using LabBadInput = testing::LabCliTest;

// Options out of their range name the range. What a replay has no use for
// is refused, never silently ignored: there is no kernel, device, trace or
// output to check, no tuning cache to replace, and nothing to re-measure
// or cut short (a recorded time reads the same at every repetition); a
// replay warm-starts only from --warm-from's files.
TEST_F(LabBadInput, AreUsageErrorsNamingTheOptionAndTheFix) {
  const std::pair<std::string, std::vector<std::string>> cases[] = {
      {kBenchSearch + "--seeds 0", {"--seeds", "between 1 and 10000"}},
      {kBenchSearch + "--seeds 0x3", {"--seeds", "not a whole decimal number"}},
      {kBenchSearch + "--first-seed 1e3", {"--first-seed", "not a whole decimal number"}},
      {kBenchSearch + "--budget-fraction nan", {"--budget-fraction", "not a finite"}},
      {kBenchSearch + "--budget-fraction 1.5", {"--budget-fraction", "between 0.0001 and 1"}},
      {kBenchSearch + "--max-configs -1", {"--max-configs", "between 1 and"}},
      {kBenchSearch + "--max-configs 0", {"--max-configs", "between 1 and"}},
      {kBenchSearch + "--max-configs 18446744073709551616", {"--max-configs", "out of range"}},
      {kBenchSearch + "--threads 0", {"--threads", "between 1 and 1024"}},
      {"tune --recorded /", {"--recorded", "is actually a directory"}},
      {kTuneRecorded + "--trace t.json", {"--trace", "not expected"}},
      {kTuneRecorded + "--shape M=8", {"--shape", "not expected"}},
      {kTuneRecorded + "--finalists 0", {"--finalists", "not expected"}},
      {kTuneRecorded + "--early-stop 2", {"--early-stop", "not expected"}},
      {kTuneRecorded + "--force", {"--force", "not expected"}},
      {kTuneRecorded + "--warm-start 2", {"--warm-start", "--warm-from"}},
      {kTuneRecorded + "--warm-start-devices this", {"--warm-start-devices", "--warm-from"}},
  };
  for (const auto& [args, expected] : cases) expect_usage_error(args, expected);
}

}  // namespace
}  // namespace kiln
