// Best-so-far against simulated time, for `kiln-lab bench search`: every
// strategy and seed is tuned through replay_tune() (the real pipeline on the
// virtual clock: P compile workers, one benchmark worker, pipelined), so
// the curve counts what each config cost to compile and benchmark and what
// the pipeline overlapped, not only how many configs were measured. A
// strategy that proposes cheap configs, or that waits on its rounds, shows
// here and not in the configs curve.
//
// The reported time points are shares of the space's exhaustive serial
// time (every config compiled and benchmarked one after another), so they
// compare across files as the configs curve's shares of the space do; the
// SVG panel plots the whole curve against simulated seconds.
#pragma once

#include <cstddef>
#include <cstdio>
#include <ostream>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "kiln/lab/recorded_space.hpp"
#include "kiln/search/search.hpp"
#include "svg_curves.hpp"

namespace kiln::tool {

struct TimeCurves {
  // One tuning run (one seed): where its best-so-far fraction of the
  // optimum rose (simulated second, fraction), and when the run ended.
  struct Run {
    std::vector<std::pair<double, double>> steps;
    double finished_s = 0;
  };
  struct Strategy {
    std::string name;
    std::vector<Run> runs;  // one per seed
  };

  int threads = 2;  // simulated compile workers
  std::size_t budget = 0;
  double serial_exhaustive_s = 0;
  std::vector<double> shares;  // reported points, as shares of serial_exhaustive_s
  std::vector<Strategy> strategies;

  nlohmann::json to_json() const;
  // Indented lines under a file's configs table.
  void print(std::FILE* out) const;
  // One SVG panel: per strategy (colours in order, as
  // the configs panel uses them) the median and the quartile band against
  // simulated seconds, log x.
  void svg_panel(std::ostream& s, const PlotPanel& p, const std::string& title,
                 std::span<const char* const> colors) const;
};

// The run's best-so-far fraction at simulated second `seconds` (0 before
// anything ran).
double fraction_at(const TimeCurves::Run& run, double seconds);

// Tunes `space` with each strategy for `seeds` seeds (first_seed onwards,
// as the configs curves use them), `budget` configs each, on `threads` simulated
// compile workers, steered strategies fed as `pacing` says. The seeds run
// side by side on the machine's cores.
Result<TimeCurves> search_time_curves(const RecordedSpace& space,
                                      const std::vector<std::string>& strategies,
                                      std::size_t budget, int seeds, int first_seed, int threads,
                                      SearchPacing pacing = {},
                                      const std::vector<TuningRecord>& warm_from = {},
                                      std::size_t warm_start = 3);

}  // namespace kiln::tool
