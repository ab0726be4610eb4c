// The machine's memory bandwidth as `kiln bench rows` compares kernels with
// it: STREAM-like access patterns over arrays far larger than the caches,
// on a given number of threads, each counted the STREAM way (the bytes the
// program asks to read and write, not the lines the hardware moves for
// them). The best pattern is the baseline, whatever it is.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace kiln::tool {

// One access pattern over `floats` floats per array, split over `threads`.
class BandwidthProbes {
 public:
  BandwidthProbes(std::size_t floats, int threads);
  // The names of the patterns: read, write, copy, memcpy, update, triad.
  static const std::vector<std::string>& names();
  // One pass of `name`, timed; the bytes it counts go to `bytes`.
  double run_seconds(const std::string& name, double& bytes);

 private:
  std::size_t floats_;
  int threads_;
  std::vector<float> a_, b_, c_;
};

// Each pattern's GB/s (median of its passes) and the best, as JSON:
// {"threads", "array_bytes", "probes": {name: gbps}, "best", "gbps"}.
nlohmann::json bandwidth_json(const std::vector<std::string>& names,
                              const std::vector<std::vector<double>>& gbps_passes, int threads,
                              std::size_t array_bytes);

}  // namespace kiln::tool
