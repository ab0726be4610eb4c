// A recorded search space: a Kernel Tuner cache file, its T4 output file or
// a KTT (Kernel Tuning Toolkit) output file (JSON, optionally gzip'd),
// holding every config of a real kernel's space measured on a real device,
// with each config's run time, compile time and benchmark time
// (../shared/recorded-spaces/README.md describes the layout). Replaying one
// shows how a search strategy does on that device without the device.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "kiln/backends/replay.hpp"
#include "kiln/cache/tuning_record.hpp"
#include "kiln/core/config_space.hpp"
#include "kiln/core/error.hpp"

namespace kiln {

// One recorded config: what the replay backend reads (ReplayRecord: the
// time it measures, its failure, its compile and benchmark cost) and what
// the file says besides. ReplayRecord::time_ms, where the file's objective
// is the run time, is that time; where it is another figure (GFLOP/s,
// energy), the optimum's run time scaled by how far this config's figure
// falls short of the optimum's: a search minimising it ranks configs as the
// objective does, and optimum_ms / time_ms is the config's fraction of the
// optimum either way.
struct RecordedConfig : replay::ReplayRecord {
  Config config;
  double run_ms = 0;     // the recorded run time, where the config worked
  double objective = 0;  // its objective's figure, where the config worked
};

struct RecordedSpace {
  std::filesystem::path path;
  std::string device, kernel;
  // The parameters in tune_params_keys order, each with its values; the
  // constraint "recorded" keeps exactly the configs the file holds (configs
  // the space's restrictions ruled out are absent from it).
  ConfigSpace space;
  std::vector<RecordedConfig> configs;  // in file order
  // The file's "objective" (Kernel Tuner's default: "time") and whether a
  // higher figure is better: the file's "objective_higher_is_better", else
  // Kernel Tuner's rule for its known objectives (time and energy lower;
  // GFLOP/s, TFLOP/s, GB/s, TB/s, GFLOPS/W, TFLOPS/W, GFLOP/J, TFLOP/J
  // higher). Kernel Tuner itself refuses any other objective without a
  // direction, and so does the reader.
  std::string objective = "time";
  bool higher_is_better = false;
  double optimum_ms = 0;  // the best config's time_ms (its run time)
  double optimum = 0;     // the best config's objective figure

  bool by_time() const { return objective == "time" && !higher_is_better; }

  // The record of `config`, or nullptr when the file does not hold it.
  const RecordedConfig* find(const Config& config) const;
  // Every recorded config, in file order: SearchSetup::listed of a replay.
  std::vector<Config> listed() const;

  // Config::key() -> its place in `configs`.
  std::shared_ptr<const std::unordered_map<std::string, std::size_t>> index;
};

// Reads a Kernel Tuner cache file (closed, or left open by a tuning run as
// Kernel Tuner writes it: its complete records) or T4 output file (.json or
// .json.gz; T4's parameter lists are the values its configurations take,
// its benchmark cost the sum of the recorded runs when it has no
// "benchmark" timing, its invalid results failures by kind), or KTT output
// file (recorded_ktt.hpp: its TotalDuration the run time, its statuses
// failures by kind). Errors name the file and what is wrong with it (not
// JSON, no "cache", a record without a parameter or with a value its
// parameter's list lacks, two records of one config, a value type Kiln
// cannot hold, an objective of no known direction, a working config without
// its objective's figure). A time or figure that is no measurement (a
// failure's name, Kernel Tuner's error value 1e20, zero or less) makes its
// config a failed one.
Result<RecordedSpace> read_recorded_space(const std::filesystem::path& path);

// Whether read_recorded_space takes a .zip archive of one such file (this
// Kiln was built with libzip; `kiln info` says so).
bool recorded_zip_supported();

// The same from the file's (uncompressed) text; `path` names it in errors.
// Any text gives a space or an error, never an exception.
Result<RecordedSpace> parse_recorded_space(std::string_view text,
                                           const std::filesystem::path& path);

// The device `recorded` was measured on, as a tuning record names it: arch
// "recorded" and the file's device name; a file that names none is "an
// unnamed device (FILE)", after its file name, so that two such files are
// two devices.
DeviceIdentity recorded_device(const RecordedSpace& recorded);
// What a replay of `recorded` looks its warm start up as: recorded_device,
// a zero definition (as recorded_record's), no toolchain or environment.
TuningIdentity recorded_identity(const RecordedSpace& recorded);

// `recorded` as one tuning record of its kernel on recorded_device: its
// optimum the winner, every config it recorded among the measured (a failed
// one not ok), each with its recorded compile and benchmark cost. Its
// problem is the kernel's name alone and its definition zero, as a replay's
// are (replay_tune): what a replay's warm start from other devices reads.
TuningRecord recorded_record(const RecordedSpace& recorded);

// `recorded` as what the replay backend reads (borrowed: it must outlive
// the source).
class RecordedSource final : public replay::ReplaySource {
 public:
  explicit RecordedSource(const RecordedSpace& recorded) : recorded_(recorded) {}
  const replay::ReplayRecord* find(const std::string& key) const override;
  std::string device() const override { return recorded_.device; }

 private:
  const RecordedSpace& recorded_;
};

}  // namespace kiln
