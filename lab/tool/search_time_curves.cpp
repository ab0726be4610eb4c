// search_time_curves: each strategy and seed replayed through the pipeline
// on the virtual clock; best-so-far against simulated seconds.
#include "search_time_curves.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <sstream>

#include "duration_text.hpp"
#include "kiln/lab/replay_tune.hpp"
#include "parallel_runs.hpp"
#include "sample_stats.hpp"

namespace kiln::tool {

namespace {

// Candidate time points, as shares of the exhaustive serial time; a file
// reports those up to the first one every run had finished by.
const std::vector<double> kTimeShares = {0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0};

// The steps of one run: its successful measurements in the order their
// results landed, kept where they beat the best so far.
TimeCurves::Run run_of(const RecordedSpace& space, const ReplayTuneResult& r) {
  std::vector<std::pair<double, double>> landed;  // (second, recorded ms)
  for (std::size_t i = 0; i < r.measurements.size(); ++i) {
    const Measurement& m = r.measurements[i];
    const RecordedConfig* rec = m.ok() ? space.find(m.config) : nullptr;
    if (rec && rec->time_ms) landed.emplace_back(r.landed_seconds.at(i), *rec->time_ms);
  }
  std::sort(landed.begin(), landed.end());
  TimeCurves::Run run;
  run.finished_s = r.simulated_seconds;
  double best = 0;
  for (const auto& [at, ms] : landed) {
    if (best > 0 && ms >= best) continue;
    best = ms;
    run.steps.emplace_back(at, space.optimum_ms / best);
  }
  return run;
}

// Every config compiled and (when it compiled) benchmarked, one after another.
double exhaustive_serial_seconds(const RecordedSpace& space) {
  double total = 0;
  for (const RecordedConfig& c : space.configs) {
    total += c.compile_ms / 1e3;
    if (c.failure != "CompilationFailedConfig") total += c.benchmark_ms / 1e3;
  }
  return total;
}

std::vector<double> fractions_at(const TimeCurves::Strategy& st, double seconds) {
  std::vector<double> v;
  for (const auto& run : st.runs) v.push_back(fraction_at(run, seconds));
  return v;
}

std::vector<double> finish_times(const TimeCurves::Strategy& st) {
  std::vector<double> v;
  for (const auto& run : st.runs) v.push_back(run.finished_s);
  return v;
}

nlohmann::json quartiles(const std::vector<double>& v) {
  return {{"median", quantile(v, 0.5)}, {"q1", quantile(v, 0.25)}, {"q3", quantile(v, 0.75)}};
}

}  // namespace

double fraction_at(const TimeCurves::Run& run, double seconds) {
  double fraction = 0;
  for (const auto& [at, f] : run.steps) {
    if (at > seconds) break;
    fraction = f;
  }
  return fraction;
}

nlohmann::json TimeCurves::to_json() const {
  nlohmann::json by = nlohmann::json::object();
  for (const Strategy& st : strategies) {
    nlohmann::json points = nlohmann::json::array();
    for (double share : shares) {
      nlohmann::json p = quartiles(fractions_at(st, share * serial_exhaustive_s));
      p["share_of_serial"] = share;
      p["seconds"] = share * serial_exhaustive_s;
      points.push_back(p);
    }
    by[st.name] = {{"points", points}, {"finished_s", quartiles(finish_times(st))}};
  }
  return {{"threads", threads},
          {"pipelined", true},
          {"budget", budget},
          {"serial_exhaustive_s", serial_exhaustive_s},
          {"strategies", by}};
}

void TimeCurves::print(std::FILE* out) const {
  std::fprintf(out,
               "  best-so-far against simulated time (Kiln's pipeline, P=%d compile workers, %zu "
               "configs; %% of the %.4g s that compiling and benchmarking every config one after "
               "another takes):\n  %-12s",
               threads, budget, serial_exhaustive_s, "strategy");
  for (double share : shares) {
    char head[32];
    const double seconds = share * serial_exhaustive_s;
    std::snprintf(head, sizeof head, "%g%% = %s", share * 100, duration_text(seconds).c_str());
    std::fprintf(out, "  %-23s", head);
  }
  std::fprintf(out, "  %s\n", "done at (median)");
  for (const Strategy& st : strategies) {
    std::fprintf(out, "  %-12s", st.name.c_str());
    for (double share : shares) {
      const auto v = fractions_at(st, share * serial_exhaustive_s);
      std::fprintf(out, "  %5.3f [%5.3f,%5.3f]   ", quantile(v, 0.5), quantile(v, 0.25),
                   quantile(v, 0.75));
    }
    std::fprintf(out, "  %s\n", duration_text(quantile(finish_times(st), 0.5)).c_str());
  }
}

void TimeCurves::svg_panel(std::ostream& s, const PlotPanel& p, const std::string& title,
                           std::span<const char* const> colors) const {
  // (1) The x range: from the first result any run had to the last run's end.
  double lo = 0, hi = 0;
  for (const Strategy& st : strategies) {
    for (const Run& run : st.runs) {
      if (!run.steps.empty() && (lo == 0 || run.steps.front().first < lo))
        lo = run.steps.front().first;
      hi = std::max(hi, run.finished_s);
    }
  }
  if (lo <= 0 || hi <= lo) {
    hi = lo > 0 ? lo * 10 : 10;
    lo = hi / 10;
  }
  const double llo = std::log10(lo), lhi = std::log10(hi);
  auto px = [&](double t) { return p.x0 + p.w * (std::log10(t) - llo) / (lhi - llo); };
  svg_panel_frame(s, p, title);
  // (2) Ticks at 1, 2 and 5 times the powers of ten inside the range.
  for (double decade = std::pow(10.0, std::floor(llo)); decade <= hi; decade *= 10) {
    for (double m : {1.0, 2.0, 5.0}) {
      const double t = m * decade;
      if (t < lo || t > hi) continue;
      std::ostringstream label;
      label << t;
      svg_x_tick(s, p, px(t), label.str());
    }
  }
  s << "<text x='" << p.x0 + p.w / 2 - 110 << "' y='" << p.y0 + p.h + 30
    << "'>simulated seconds, P=" << threads << " compile workers (log)</text>\n";
  // (3) Median and quartile band per strategy, sampled at log-spaced times.
  constexpr int kSamples = 160;
  for (std::size_t i = 0; i < strategies.size(); ++i) {
    std::vector<BandPoint> points;
    for (int k = 0; k <= kSamples; ++k) {
      const double t = std::pow(10.0, llo + (lhi - llo) * k / kSamples);
      const auto v = fractions_at(strategies[i], t);
      points.push_back({px(t), quantile(v, 0.25), quantile(v, 0.5), quantile(v, 0.75)});
    }
    svg_band(s, p, points, colors[i % colors.size()], strategies[i].name, i);
  }
}

Result<TimeCurves> search_time_curves(const RecordedSpace& space,
                                      const std::vector<std::string>& strategies,
                                      std::size_t budget, int seeds, int first_seed, int threads,
                                      SearchPacing pacing,
                                      const std::vector<TuningRecord>& warm_from,
                                      std::size_t warm_start) {
  TimeCurves out;
  out.threads = threads;
  out.budget = budget;
  out.serial_exhaustive_s = exhaustive_serial_seconds(space);
  // (1) Every (strategy, seed) run side by side; each owns its slot.
  const std::size_t per = static_cast<std::size_t>(seeds);
  std::vector<TimeCurves::Run> runs(strategies.size() * per);
  std::vector<std::optional<ErrorInfo>> errors(runs.size());
  run_parallel(runs.size(), [&](std::size_t i) {
    TuneOptions o;
    o.search.strategy = strategies[i / per];
    o.search.max_configs = budget;
    o.search.seed = static_cast<std::uint64_t>(first_seed) + i % per;
    o.search.batch = pacing.batch;
    o.search.in_flight = pacing.in_flight;
    o.pipeline.compile_threads = threads;
    o.pipeline.overlap = true;
    o.search.warm_start = warm_start;
    Result<ReplayTuneResult> r = replay_tune(space, o, warm_from);
    if (r)
      runs[i] = run_of(space, *r);
    else
      errors[i] = r.error();
  });
  for (const auto& e : errors)
    if (e) return *e;
  double earliest = 0, latest = 0;
  for (std::size_t s = 0; s < strategies.size(); ++s) {
    TimeCurves::Strategy st;
    st.name = strategies[s];
    for (std::size_t k = 0; k < per; ++k) {
      const TimeCurves::Run& run = runs[s * per + k];
      latest = std::max(latest, run.finished_s);
      if (!run.steps.empty() && (earliest == 0 || run.steps.front().first < earliest))
        earliest = run.steps.front().first;
      st.runs.push_back(std::move(runs[s * per + k]));
    }
    out.strategies.push_back(std::move(st));
  }
  // (2) The points from the first result any run had (before it every
  // fraction is 0) up to the first one by which every run had finished.
  for (double share : kTimeShares) {
    const double seconds = share * out.serial_exhaustive_s;
    if (seconds < earliest) continue;
    out.shares.push_back(share);
    if (seconds >= latest) break;
  }
  return out;
}

}  // namespace kiln::tool
