// search_wall_times: one random tuning replayed serially, batched and
// pipelined on a recorded space's costs.
#include "search_wall_times.hpp"

#include "duration_text.hpp"
#include "kiln/lab/replay_tune.hpp"

namespace kiln::tool {

namespace {

Result<ReplayTuneResult> replay(const RecordedSpace& space, std::size_t configs, std::uint64_t seed,
                                int threads, bool pipelined) {
  TuneOptions o;
  o.search.strategy = "random";
  o.search.max_configs = configs;
  o.search.seed = seed;
  o.pipeline.compile_threads = threads;
  o.pipeline.overlap = pipelined;
  return replay_tune(space, o);
}

// One config after another: each compile, then (when it compiled) its
// benchmark, summed over what the tuning measured.
double serial_seconds(const RecordedSpace& space, const std::vector<Measurement>& measured) {
  double total = 0;
  for (const Measurement& m : measured) {
    const RecordedConfig* r = space.find(m.config);
    if (!r) continue;
    total += r->compile_ms / 1e3;
    if (m.outcome != Outcome::kCompileFailed) total += r->benchmark_ms / 1e3;
  }
  return total;
}

}  // namespace

nlohmann::json WallTimes::to_json() const {
  nlohmann::json by = nlohmann::json::array();
  for (const Row& r : rows)
    by.push_back({{"threads", r.threads}, {"batch_s", r.batch_s}, {"pipeline_s", r.pipeline_s}});
  return {{"strategy", "random"},
          {"configs", configs},
          {"seed", seed},
          {"serial_s", serial_s},
          {"by_threads", by}};
}

void WallTimes::print(std::FILE* out) const {
  std::fprintf(out,
               "  simulated wall time of one tuning (random search, %zu configs, seed %llu):\n"
               "    one config after another (Triton): %s\n",
               configs, static_cast<unsigned long long>(seed), duration_text(serial_s).c_str());
  for (const Row& r : rows) {
    // A file that records no compile or benchmark cost has nothing to
    // compare with: no ratio rather than "0.00x".
    char ratio[48] = "";
    if (serial_s > 0)
      std::snprintf(ratio, sizeof ratio, " (%.2fx of serial)", r.pipeline_s / serial_s);
    std::fprintf(out,
                 "    P=%-2d compile workers: compile all then benchmark (Helion) %s, Kiln's "
                 "pipeline %s%s\n",
                 r.threads, duration_text(r.batch_s).c_str(), duration_text(r.pipeline_s).c_str(),
                 ratio);
  }
}

Result<WallTimes> search_wall_times(const RecordedSpace& space, std::size_t configs,
                                    std::uint64_t seed, const std::vector<int>& threads) {
  WallTimes out;
  out.configs = configs;
  out.seed = seed;
  for (int p : threads) {
    WallTimes::Row row;
    row.threads = p;
    auto batch = replay(space, configs, seed, p, false);
    if (!batch) return batch.error();
    auto piped = replay(space, configs, seed, p, true);
    if (!piped) return piped.error();
    row.batch_s = batch->simulated_seconds;
    row.pipeline_s = piped->simulated_seconds;
    out.serial_s = serial_seconds(space, piped->measurements);
    out.configs = piped->measurements.size();
    out.rows.push_back(row);
  }
  return out;
}

}  // namespace kiln::tool
