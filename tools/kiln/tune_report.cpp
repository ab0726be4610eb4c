#include "tune_report.hpp"

#include <algorithm>

#include "cache_failures.hpp"
#include "duration_text.hpp"

namespace kiln::tool {

nlohmann::json ConfigRow::to_json() const {
  nlohmann::json j = {{"config", config.to_json()}, {"status", status}};
  if (timed) j["median_s"] = median;
  if (timed && reps > 0) {  // a cached record keeps the median only
    j["min_s"] = min;
    j["spread"] = spread;
    j["reps"] = reps;
  }
  if (compile_seconds > 0) j["compile_s"] = compile_seconds;
  if (benchmark_seconds > 0) j["benchmark_s"] = benchmark_seconds;
  if (!reason.empty()) j["reason"] = reason;
  return j;
}

std::vector<ConfigRow> rows_from(const std::vector<Measurement>& measurements) {
  std::vector<ConfigRow> rows;
  for (const auto& m : measurements) {
    ConfigRow r;
    r.config = m.config;
    r.status = outcome_name(m.outcome);
    r.reason = m.reason();
    r.timed = m.ok();
    r.median = m.stats.median;
    r.min = m.stats.min;
    r.spread = m.stats.spread;
    r.reps = m.stats.reps;
    r.compile_seconds = m.compile_seconds;
    r.benchmark_seconds = m.benchmark_seconds;
    rows.push_back(std::move(r));
  }
  return rows;
}

std::vector<ConfigRow> rows_from(const TuningRecord& record) {
  std::vector<ConfigRow> rows;
  for (const auto& m : record.measured) {
    ConfigRow r;
    r.config = m.config;
    r.timed = m.ok;
    r.median = m.time_ms * 1e-3;
    r.benchmark_seconds = m.benchmark_ms.value_or(0) * 1e-3;
    r.status = "ok";
    if (!m.ok) {
      // The record keeps "outcome: reason" (lib/tuner/autotuner.cpp).
      const auto colon = m.reason.find(": ");
      r.status = m.reason.substr(0, colon);
      r.reason = colon == std::string::npos ? "" : m.reason.substr(colon + 2);
    }
    rows.push_back(std::move(r));
  }
  return rows;
}

void finish_report(TuneReport& report, const Config& winner, const Config& default_config) {
  std::stable_sort(report.rows.begin(), report.rows.end(),
                   [](const ConfigRow& a, const ConfigRow& b) {
                     if (a.timed != b.timed) return a.timed;
                     if (a.timed) return a.median < b.median;
                     return a.config < b.config;
                   });
  for (const auto& r : report.rows) {
    if (r.config == winner && r.timed) report.winner = r;
    if (r.config == default_config && r.timed) report.default_row = r;
  }
  if (!report.winner && !winner.values().empty()) {
    ConfigRow w;
    w.config = winner;
    w.status = "ok";
    report.winner = w;  // served without a stored time
  }
}

double TuneReport::speedup() const {
  if (!winner || !default_row || !winner->timed || winner->median <= 0) return 0;
  return default_row->median / winner->median;
}

nlohmann::json TuneReport::to_json() const {
  nlohmann::json configs = nlohmann::json::array();
  for (const auto& r : rows) configs.push_back(r.to_json());
  nlohmann::json j = {
      {"kernel", kernel},
      {"template", template_name},
      {"backend", backend},
      {"device", device},
      {"shape", shape},
      {"source", source},
      {"reference", reference.empty() ? nlohmann::json() : nlohmann::json(reference)},
      {"reference_detail",
       reference_detail.empty() ? nlohmann::json() : nlohmann::json(reference_detail)},
      {"settings", settings},
      {"configs", configs},
      {"stats", stats.to_json()}};
  if (!dtype.empty()) j["dtype"] = dtype;
  j["winner"] = winner ? winner->to_json() : nlohmann::json();
  j["default"] = default_row ? default_row->to_json() : nlohmann::json();
  j["speedup_over_default"] = speedup() > 0 ? nlohmann::json(speedup()) : nlohmann::json();
  if (winner && winner->timed && winner->median > 0) {
    if (flops > 0) j["winner"]["gflops"] = flops / winner->median * 1e-9;
    if (bytes > 0) j["winner"]["gbytes_per_s"] = bytes / winner->median * 1e-9;
  }
  if (!trace_path.empty()) j["trace"] = trace_path;
  if (!hints.empty()) j["hints"] = hints;
  if (source == "tuned" || source == "fallback" || source == "failed") {
    nlohmann::json skip = nlohmann::json::array(), again = nlohmann::json::array();
    for (const auto& f : skipped) skip.push_back(failed_config_json(f, now));
    for (const auto& f : forgotten)
      again.push_back(
          {{"config", f.failure.config.to_json()}, {"outcome", f.failure.outcome}, {"why", f.why}});
    j["skipped"] = std::move(skip);
    j["measured_again"] = std::move(again);
  }
  if (source == "tuned") {
    j["saved"] = saved;
    if (!saved) j["not_saved_reason"] = not_saved_reason;
  }
  return j;
}

namespace {

// The header line and one row per config: status, times, why it failed.
void print_table(const TuneReport& r, std::FILE* out) {
  std::string shape_text;
  for (const auto& name : r.dims) {
    if (auto it = r.shape.find(name); it != r.shape.end())
      shape_text += (shape_text.empty() ? "" : ",") + name + "=" + std::to_string(it->second);
  }
  // A replayed recorded space has no shape: "shape " with nothing after it
  // read as a report that lost its shape.
  std::fprintf(out, "%s (%s) on %s [%s]%s%s%s%s\n", r.kernel.c_str(), r.template_name.c_str(),
               r.device.value("name", std::string("?")).c_str(), r.backend.c_str(),
               shape_text.empty() ? "" : ", shape ", shape_text.c_str(),
               r.dtype.empty() ? "" : ", dtype ", r.dtype.c_str());
  std::size_t width = 6;
  for (const auto& row : r.rows) width = std::max(width, row.config.to_string().size());
  std::fprintf(out, "\n  %-*s  %-14s %10s %10s %7s  %s\n", static_cast<int>(width), "config",
               "status", "median", "min", "spread", "reason");
  for (const auto& row : r.rows) {
    const bool is_winner = r.winner && row.config == r.winner->config;
    const bool is_default = r.default_row && row.config == r.default_row->config;
    std::string status = row.status + (is_winner ? " *" : "") + (is_default ? " (default)" : "");
    char spread[16] = "";
    if (row.timed && row.reps > 0) std::snprintf(spread, sizeof spread, "%.1f%%", row.spread * 100);
    std::fprintf(out, "  %-*s  %-14s %10s %10s %7s  %s\n", static_cast<int>(width),
                 row.config.to_string().c_str(), status.c_str(),
                 row.timed ? duration_text(row.median).c_str() : "-",
                 row.timed && row.reps > 0 ? duration_text(row.min).c_str() : "-", spread,
                 failure_gist(row.reason, 100).c_str());
  }
  std::fprintf(out, "\n");
}

// The winner with its time, rate and speedup, or why there is none.
void print_winner(const TuneReport& r, std::FILE* out) {
  if (r.winner) {
    const ConfigRow& w = *r.winner;
    std::fprintf(out, "winner: %s", w.config.to_string().c_str());
    if (w.timed) std::fprintf(out, "  median %s", duration_text(w.median).c_str());
    if (w.timed && r.flops > 0 && w.median > 0)
      std::fprintf(out, "  %.2f GFLOP/s", r.flops / w.median * 1e-9);
    if (w.timed && r.bytes > 0 && w.median > 0)
      std::fprintf(out, "  %.2f GB/s", r.bytes / w.median * 1e-9);
    if (r.speedup() > 0) {
      std::fprintf(out, "\n        %.2fx over the default config %s (%s)", r.speedup(),
                   r.default_row->config.to_string().c_str(),
                   duration_text(r.default_row->median).c_str());
    }
    std::fprintf(out, "\n");
    return;
  }
  const auto cancelled = r.stats.failed_by_reason.find("cancelled");
  const bool budget = cancelled != r.stats.failed_by_reason.end() && r.stats.benchmarked == 0 &&
                      cancelled->second == r.stats.failed;
  std::fprintf(out, "winner: none (%s; the default config is used)\n",
               budget ? "the budget ran out before any config was measured: raise --budget-s"
               : r.rows.empty() ? "no config was measured: for this shape the kernel's early "
                                  "prune rejected every config proposed (check its early_prune "
                                  "against the shape), or the search proposed none"
                                : "no config ran correctly");
}

// Where the answer came from, and what outputs were checked against.
void print_source(const TuneReport& r, std::FILE* out) {
  const std::string& source = r.source;
  if (source == "disk") {
    std::fprintf(out,
                 "source: disk (the tuning cache; nothing compiled or measured, the table is the "
                 "stored record; --retune measures again)\n");
  } else {
    // "saved" only when the record was written: a read-only, disabled or
    // refused cache, or a full disk, is said instead.
    const std::string note =
        source == "tuned"     ? r.saved ? " (saved: the same command starts warm next time)"
                                        : " (not saved: " + r.not_saved_reason + ")"
        : source == "default" ? " (tuning is off: KILN_TUNING=0; nothing measured)"
        : source == "failed"  ? " (no config ran correctly and the default config cannot be built: "
                                "nothing saved)"
        : source == "fallback" ? " (no config ran correctly: the default config, nothing saved)"
        : source.starts_with("nearest")
            ? " (tuning is off and this shape has no record: the winner of that nearest tuned "
              "shape, valid here; the table is its record)"
            : "";
    std::fprintf(out, "source: %s%s\n", source.c_str(), note.c_str());
  }
  if (!r.reference.empty()) {
    std::fprintf(out, "reference: %s%s%s%s\n", r.reference.c_str(),
                 r.reference_detail.empty() ? "" : " (", r.reference_detail.c_str(),
                 r.reference_detail.empty() ? "" : ")");
    if (r.reference == "none" && r.winner)
      std::fprintf(out, "           the winner's outputs were not checked\n");
  }
}

// The run's statistics.
void print_stats(const KernelStats& stats, std::FILE* out) {
  std::string failed;
  for (const auto& [why, n] : stats.failed_by_reason)
    failed += (failed.empty() ? " (" : ", ") + why + " " + std::to_string(n);
  if (!failed.empty()) failed += ")";
  std::fprintf(
      out,
      "stats: cache %llu hit(s), %llu miss(es); %llu configs, %llu compiled, %llu from the "
      "artifact cache, %llu benchmarked, %llu failed%s\n"
      "       compile %.2f s, benchmark %.2f s, overlap %.2f s, wall %.2f s\n",
      static_cast<unsigned long long>(stats.cache_hits),
      static_cast<unsigned long long>(stats.cache_misses),
      static_cast<unsigned long long>(stats.configs),
      static_cast<unsigned long long>(stats.compiled),
      static_cast<unsigned long long>(stats.artifact_hits),
      static_cast<unsigned long long>(stats.benchmarked),
      static_cast<unsigned long long>(stats.failed), failed.c_str(), stats.compile_seconds,
      stats.benchmark_seconds, stats.overlap_seconds, stats.wall_seconds);
}

// What earlier tunings changed in this one (search_memory.hpp,
// finalists.hpp): configs skipped, warm starts, finalists, failures
// measured again.
void print_memory(const TuneReport& r, std::FILE* out) {
  const KernelStats& stats = r.stats;
  if (stats.resumed > 0)
    std::fprintf(out, "resumed: %llu measured before (the journal of a run cut short)\n",
                 static_cast<unsigned long long>(stats.resumed));
  if (stats.skipped_failed_before + stats.warm_started + stats.finalists > 0)
    std::fprintf(out,
                 "memory: %llu skipped (failed before), %llu warm-start config(s) measured "
                 "first; %llu finalists re-measured in %.2f s\n",
                 static_cast<unsigned long long>(stats.skipped_failed_before),
                 static_cast<unsigned long long>(stats.warm_started),
                 static_cast<unsigned long long>(stats.finalists), stats.finalist_seconds);
  // A few lines name the skipped configs; a large space's skips would
  // bury the report, and --json lists every one.
  constexpr std::size_t kListed = 10;
  for (std::size_t i = 0; i < r.skipped.size() && i < kListed; ++i) {
    const FailedConfig& f = r.skipped[i];
    std::fprintf(out, "  skipped %s: %s %s ago (skipped by %d run(s) since): %s\n",
                 f.config.to_string().c_str(), f.outcome.c_str(),
                 age_text(r.now - f.failed_at).c_str(), f.skipped_runs,
                 failure_gist(f.reason, 100).c_str());
  }
  if (r.skipped.size() > kListed)
    std::fprintf(out, "  ... and %zu more (--json lists every one)\n", r.skipped.size() - kListed);
  if (!r.skipped.empty())
    std::fprintf(out,
                 "  (--retune measures them again; `kiln cache forget --failures` forgets them)\n");
  for (const auto& f : r.forgotten) {
    std::fprintf(out, "memory: %s failed before (%s), measured again: %s\n",
                 f.failure.config.to_string().c_str(), f.failure.outcome.c_str(), f.why.c_str());
  }
}

}  // namespace

void TuneReport::print(std::FILE* out) const {
  print_table(*this, out);
  print_winner(*this, out);
  print_source(*this, out);
  print_stats(stats, out);
  print_memory(*this, out);
  if (!trace_path.empty())
    std::fprintf(out, "trace: %s (open in ui.perfetto.dev)\n", trace_path.c_str());
  for (const auto& h : hints) std::fprintf(out, "hint: %s\n", h.c_str());
}

}  // namespace kiln::tool
