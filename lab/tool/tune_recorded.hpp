// kiln-lab tune --recorded FILE.json[.gz] [--search S] [--effort E] [--max-configs N]
//   [--budget-s S] [--threads P] [--seed N] [--no-pipeline] [--group-size N]
//   [--warm-from FILE... [--warm-start N] [--warm-start-devices this|any]] [--json]
// Tunes a recorded space (a Kernel Tuner cache, T4 or KTT output file, or Kiln's own
// `kiln cache export --format kernel-tuner`) as if on the GPU that recorded
// it: the real tuner and pipeline on a virtual clock (kiln/lab/replay_tune.hpp).
// Reports what `kiln tune` reports, plus the best found as a fraction of the
// file's optimum and the simulated wall time. --budget-s and --threads are
// simulated: seconds on the virtual clock, compile workers of the simulated
// machine (default 1, the recording's one compile at a time). --warm-from:
// other devices' recorded spaces of the kernel stand in for a shared tuning
// cache, and the warm start (kiln/tuner/warm_start.hpp) measures first what
// they found fast; a file of the replayed device itself is left out (its
// fastest config is the answer) and said so.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "kiln/search/search.hpp"

namespace kiln::tool {

struct RecordedTuneArgs {
  std::string file;
  std::string search = "exhaustive";
  std::string effort = "default";  // read with search "auto", as kiln tune reads it
  std::size_t max_configs = 0;
  double budget_s = 0;
  int threads = 0;
  std::uint64_t seed = 0;
  bool no_pipeline = false;
  std::size_t group_size = 0;
  SearchPacing pacing;  // --in-flight / --rounds
  std::vector<std::string> warm_from;
  std::size_t warm_start = 3;
  std::string warm_start_devices = "any";
  bool json = false;
};

// 0: a winner; 1: no config ran; 2: the file cannot be read (the error
// names the file and what is wrong with it) or the strategy or effort is
// unknown.
int run_tune_recorded(const RecordedTuneArgs& args);

}  // namespace kiln::tool
