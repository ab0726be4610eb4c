#include "finalists.hpp"

#include <algorithm>
#include <chrono>
#include <map>
#include <set>
#include <string>

namespace kiln::internal {

namespace {

// Indices of the `count` fastest ok measurements within kFinalistBand of
// the fastest whose artifact is at hand, or that an earlier run measured
// (`resumed`: built again, or read from the artifact cache).
std::vector<std::size_t> pick_finalists(const PipelineOutput& out, std::size_t count,
                                        const std::set<std::string>& resumed) {
  std::vector<std::size_t> ok;
  for (std::size_t i = 0; i < out.measurements.size(); ++i) {
    const Measurement& m = out.measurements[i];
    const std::string key = m.config.key();
    if (m.ok() && (out.artifacts.count(key) || resumed.count(key))) ok.push_back(i);
  }
  std::sort(ok.begin(), ok.end(), [&](std::size_t a, std::size_t b) {
    const Measurement& x = out.measurements[a];
    const Measurement& y = out.measurements[b];
    if (x.stats.median != y.stats.median) return x.stats.median < y.stats.median;
    return x.config.to_string() < y.config.to_string();
  });
  if (ok.size() > count) ok.resize(count);
  if (ok.empty()) return ok;
  const double limit = out.measurements[ok.front()].stats.median * kFinalistBand;
  std::erase_if(ok, [&](std::size_t i) { return out.measurements[i].stats.median > limit; });
  return ok;
}

// The inputs of a re-measurement round: the search's, on its artifacts,
// timed in full and not checked again.
PipelineInputs round_inputs(const PipelineInputs& in, const PipelineOutput& out,
                            const std::vector<std::size_t>& chosen, std::size_t rounds) {
  PipelineInputs r = in;
  r.options.measure.early_stop = 0;  // finalists get the full measurement
  // Split over the rounds: together they cost each finalist one more
  // measurement of target_seconds, and interleaving is what they buy.
  r.options.measure.target_seconds /= static_cast<double>(rounds);
  r.best_seconds = 0;
  r.screen = false;
  r.judge = nullptr;
  r.reference = std::nullopt;
  r.progress = nullptr;
  // A trace of its own: the search's trace and benchmark time stay the
  // search's; the re-measurement is counted apart (finalist_seconds).
  r.trace = std::make_shared<TraceRecorder>();
  r.journal = nullptr;  // measured anew, never from the journal nor into it
  r.ready.clear();
  for (std::size_t i : chosen) {
    const std::string text = out.measurements[i].config.key();
    if (auto a = out.artifacts.find(text); a != out.artifacts.end())
      r.ready.emplace(text, a->second);
  }
  return r;
}

// The measurement of median time among one config's rounds (the lower
// middle one for an even count), so its stats stay one coherent run.
Measurement median_round(std::vector<Measurement> runs) {
  std::sort(runs.begin(), runs.end(), [](const Measurement& a, const Measurement& b) {
    return a.stats.median < b.stats.median;
  });
  return runs[(runs.size() - 1) / 2];
}

}  // namespace

void remeasure_finalists(PipelineOutput& out, const PipelineInputs& in, std::size_t count,
                         std::size_t rounds) {
  // A replay times each config as recorded: measuring again would give the
  // same times and spend simulated time on nothing.
  if (count < 2 || rounds == 0 || !in.clock->measures_real_time()) return;
  const std::vector<std::size_t> chosen =
      pick_finalists(out, count, in.journal ? in.journal->resumed() : std::set<std::string>());
  // Nothing to choose between; but a screened search timed even the lone
  // finalist for a few repetitions only, and its time is what is kept.
  if (chosen.empty() || (chosen.size() < 2 && !in.screen)) return;
  const auto started = std::chrono::steady_clock::now();
  PipelineInputs r = round_inputs(in, out, chosen, rounds);
  std::vector<Config> order;
  for (std::size_t i : chosen) order.push_back(out.measurements[i].config);

  // Every round in one pipeline run, round k starting at finalist k: each
  // finalist takes every place in the order, so none is always measured
  // first (colder) or last (after the others heated the machine), and the
  // benchmark workers start once, not once a round.
  std::vector<Config> rounds_order;
  for (std::size_t round = 0; round < rounds; ++round) {
    for (std::size_t j = 0; j < order.size(); ++j)
      rounds_order.push_back(order[(round + j) % order.size()]);
  }
  std::map<std::string, std::vector<Measurement>> timed;  // ok re-measurements by config
  std::map<std::string, Measurement> broke;               // a failure of its own this time
  if (std::chrono::steady_clock::now() < in.deadline) {
    PipelineOutput o = run_pipeline(rounds_order, r);
    for (auto& m : o.measurements) {
      const std::string text = m.config.key();
      if (m.ok())
        timed[text].push_back(std::move(m));
      else if (m.outcome != Outcome::kCancelled)
        broke.emplace(text, std::move(m));
    }
  }

  for (std::size_t i : chosen) {
    Measurement& m = out.measurements[i];
    const std::string text = m.config.key();
    // What the search spent on it stays its cost; the finalists' rounds are
    // counted apart (stats.finalist_seconds).
    const double compile_seconds = m.compile_seconds;
    const std::size_t group_size = m.group_size;
    const double benchmark_seconds = m.benchmark_seconds;
    if (auto failed = broke.find(text); failed != broke.end()) {
      m = failed->second;
    } else if (auto runs = timed.find(text); runs != timed.end()) {
      m = median_round(std::move(runs->second));
    } else {
      continue;  // the budget ended first: its search measurement stands
    }
    m.compile_seconds = compile_seconds;
    m.group_size = group_size;
    m.benchmark_seconds = benchmark_seconds;
    out.finalists.push_back(m.config);
  }
  out.stats.finalists = out.finalists.size();
  out.stats.finalist_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
}

std::optional<Selection> select_with_finalists(const std::vector<Measurement>& measurements,
                                               const std::vector<Config>& finalists,
                                               const SelectionPolicy& policy) {
  std::vector<Measurement> among;
  std::vector<std::size_t> index;
  for (std::size_t i = 0; i < measurements.size(); ++i) {
    const Measurement& m = measurements[i];
    if (!m.ok() || std::find(finalists.begin(), finalists.end(), m.config) == finalists.end())
      continue;
    among.push_back(m);
    index.push_back(i);
  }
  if (among.empty()) return select_winner(measurements, policy);
  auto chosen = select_winner(among, policy);
  if (!chosen) return chosen;
  chosen->winner = index[chosen->winner];
  for (auto& t : chosen->tied) t = index[t];
  return chosen;
}

}  // namespace kiln::internal
