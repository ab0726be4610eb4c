// `--warm-from FILE...` of `kiln-lab tune --recorded` and `kiln-lab bench search`:
// other devices' recorded spaces of a kernel standing in for a shared
// tuning cache, so that a replay's warm start (kiln/tuner/warm_start.hpp)
// reads what those devices found fast.
#pragma once

#include <string>
#include <vector>

#include "kiln/core/error.hpp"
#include "kiln/lab/recorded_space.hpp"

namespace kiln::tool {

// Every file read, in order; the first that cannot be read is the error
// (naming the file and what is wrong with it).
Result<std::vector<RecordedSpace>> read_warm_from(const std::vector<std::string>& files);

struct WarmFrom {
  std::vector<TuningRecord> records;  // recorded_record of each file used
  std::vector<std::string> used;      // their paths
  // Each file left out, as "PATH: why": the replayed file itself, a file
  // of the replayed device (its fastest config is the answer, not a warm
  // start), or a file of another kernel.
  std::vector<std::string> left_out;
};

// The files of `warm` that may warm-start a replay of `target`.
WarmFrom warm_from_for(const RecordedSpace& target, const std::vector<RecordedSpace>& warm);

}  // namespace kiln::tool
