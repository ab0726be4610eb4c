// The simulated wall time of one tuning on a recorded space's costs, done
// three ways (`kiln-lab bench search`):
//   serial    compile a config, benchmark it, then the next (Triton's
//             autotuner today): the sum of every compile and benchmark;
//   batch     compile the whole batch on P compile workers, then benchmark
//             (Helion today): Kiln's pipeline with --no-pipeline;
//   pipeline  Kiln's pipeline: each config benchmarked as soon as it has
//             compiled while the P workers compile the rest.
// The tuning is a random search of `configs` configs (one batch, known up
// front, so every way measures the same configs); batch and pipeline run
// through the real pipeline on the virtual clock (kiln/lab/replay_tune.hpp).
#pragma once

#include <cstdint>
#include <cstdio>
#include <vector>

#include <nlohmann/json.hpp>

#include "kiln/lab/recorded_space.hpp"

namespace kiln::tool {

struct WallTimes {
  std::size_t configs = 0;
  std::uint64_t seed = 0;
  double serial_s = 0;
  struct Row {
    int threads = 0;  // P compile workers
    double batch_s = 0;
    double pipeline_s = 0;
  };
  std::vector<Row> rows;

  nlohmann::json to_json() const;
  // Indented lines under a file's curves in the table.
  void print(std::FILE* out) const;
};

// For P in `threads` (1, 2, 16 in `kiln-lab bench search`).
Result<WallTimes> search_wall_times(const RecordedSpace& space, std::size_t configs,
                                    std::uint64_t seed, const std::vector<int>& threads);

}  // namespace kiln::tool
