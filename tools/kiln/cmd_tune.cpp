// kiln tune --kernel NAME --shape M=..,N=..,K=.. [--dtype D] [--backend auto|cuda|cpu]
//           [--devices LIST] [--no-pipeline] [--group-size G] [--threads N]
//           [--budget-s S] [--max-configs N] [--search auto|NAME|list]
//           [--effort quick|default|full] [--isolation auto|process|thread]
//           [--warm-start N] [--warm-start-devices this|any] [--finalists N]
//           [--in-flight N | --rounds N]
//           [--trace FILE] [--json] ...
// kiln tune --template FILE --space FILE.json [--entry EXPR] --shape ...
// Tunes a shipped kernel, or the user's own, on a realistic call of that
// shape: prints every config's status and times, the winner and its speedup
// over the default config, and the statistics. The winner is saved, so the
// same command again is served from the tuning cache on disk.
// Exit codes: 0 a winner; 1 nothing ran correctly, or the backend, device or
// benchmark worker is missing; 2 bad input (docs/user-kernels.md, `kiln kernels`).
// The flags and what they set: tune_flags.hpp.

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "kiln/backends/toolchain.hpp"
#include "kiln/cache/remote_cache.hpp"
#include "kiln/kernels/tune_request.hpp"
#include "kiln/search/search_plan.hpp"
#include "kiln/tuner/failure_evidence.hpp"
#include "option_checks.hpp"
#include "tune_distributed.hpp"
#include "tune_flags.hpp"
#include "tune_report.hpp"

namespace kiln::tool {

namespace {

// `kiln tune --search list`: every registered strategy, one line each, or
// with --json one document: {"strategies": [{"name", "description"}...]}.
void print_search_strategies(std::FILE* out, bool json) {
  const char* auto_text =
      "the default: exhaustive when the --effort budget covers the space, else hybrid";
  if (json) {
    nlohmann::json list = nlohmann::json::array();
    list.push_back({{"name", kAutoSearch}, {"description", auto_text}});
    for (const auto& s : search_strategies())
      list.push_back({{"name", s.name}, {"description", s.description}});
    std::fprintf(out, "%s\n", nlohmann::json{{"strategies", list}}.dump(2).c_str());
    return;
  }
  std::fprintf(out, "%-12s %s\n", "auto", auto_text);
  for (const auto& s : search_strategies()) {
    std::fprintf(out, "%-12s %s\n", s.name.c_str(), s.description.c_str());
  }
}

// Headers a compile did not find that lie beside the template, in a
// directory the compiler does not search: the template is compiled from
// memory, so only the spec's include_dirs are looked in. One hint each.
std::vector<std::string> unsearched_headers(const TuneResult& result, const std::string& tmpl,
                                            const std::vector<std::string>& include_dirs) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path dir = fs::absolute(tmpl, ec).parent_path().lexically_normal();
  for (const auto& d : include_dirs)
    if (fs::path(d).lexically_normal() == dir) return {};
  std::vector<std::string> names;
  for (const auto& m : result.measurements)
    if (m.outcome == Outcome::kCompileFailed)
      for (auto& n : internal::missing_headers(m.reason())) names.push_back(std::move(n));
  for (const auto& f : result.skipped)
    names.insert(names.end(), f.missing_headers.begin(), f.missing_headers.end());
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  std::vector<std::string> hints;
  for (const auto& n : names) {
    if (fs::path(n).is_absolute() || !fs::is_regular_file(dir / n, ec)) continue;
    hints.push_back("'" + n + "' was not found, yet " + (dir / n).string() +
                    " exists: the template is compiled from memory and its own directory is "
                    "not searched; add \"include_dirs\": [\"" +
                    dir.string() + "\"] (or a path relative to the spec) to the spec");
  }
  return hints;
}

// The exit code of a failed tune_request(): 2 for bad input, 1 for what is
// missing here or failed while running. Prints the error.
int report_failure(ErrorInfo error) {
  const std::string step = error.details["step"];
  error.details.erase("step");
  // Bad input and a missing device are one line; the call and the run keep
  // their evidence (details).
  const bool brief = step == "request" || step == "target";
  std::fprintf(stderr, "kiln tune: %s\n", (brief ? error.message : error.describe()).c_str());
  if (step == "request") return error.code == ErrorCode::kUnavailable ? 1 : 2;
  // A shape too large for the device is bad input; a device failure is not.
  if (step == "target" || step == "call") return error.code == ErrorCode::kInvalidArgument ? 2 : 1;
  return 1;
}

// A trace is written at the end: a directory that is not there is said
// now, before the tuning, not after it in a warning. False when refused.
bool trace_directory_exists(const std::string& trace) {
  if (trace.empty()) return true;
  std::filesystem::path dir = std::filesystem::path(trace).parent_path();
  if (dir.empty()) dir = ".";
  std::error_code ec;
  if (std::filesystem::is_directory(dir, ec)) return true;
  std::fprintf(stderr,
               "kiln tune: cannot write the trace to %s: %s is not a directory; give "
               "--trace a path in a writable directory\n",
               trace.c_str(), dir.c_str());
  return false;
}

// The report's table: the run's own measurements, or, served from the
// cache, the record it was served from.
void add_rows(TuneReport& report, const TuneCall& call, const TuneResult& result) {
  const bool served_from_cache = result.source == ResultSource::kMemory ||
                                 result.source == ResultSource::kDisk ||
                                 result.source == ResultSource::kNearest;
  if (!served_from_cache) {
    report.rows = rows_from(result.measurements);
    // Only a trace that was written is reported (the writer warned if not).
    const std::string& trace = call.options.pipeline.trace_path;
    std::error_code ec;
    if (!trace.empty() && std::filesystem::is_regular_file(trace, ec)) report.trace_path = trace;
  } else if (result.record) {
    report.rows = rows_from(*result.record);
    report.reference = result.record->reference;
    if (!result.record->reference.empty()) report.reference_detail = "when it was tuned";
  }
}

TuneReport report_of(const TuneCall& call, const kiln::TuneRun& run) {
  const TuneJob& job = run.job;
  const TuneResult& result = run.result;
  TuneReport report;
  report.kernel = job.name;
  report.template_name = job.kernel.tmpl.name;
  report.backend = job.backend;
  const DeviceProperties& props = run.target.device->properties();
  report.device = {{"name", props.name}, {"arch", props.arch}, {"ref", props.ref.to_string()}};
  report.shape = job.shape;
  report.dims = job.dims;
  report.dtype = job.dtype;
  report.source = source_name(result.source);
  // Tuning off, no record: which tuned key's winner was served.
  if (result.source == ResultSource::kNearest && result.record)
    report.source += ": " + result.record->problem.canonical();
  // A cached winner was checked when it was tuned, not now (its record says
  // against what, in add_rows).
  if (!result.measurements.empty()) {
    report.reference = result.reference.name();
    report.reference_detail = result.reference.kind == ReferenceReport::Kind::kUser
                                  ? job.reference_text
                                  : result.reference.detail;
    report.saved = result.saved;
    report.not_saved_reason = result.not_saved_reason;
  }
  report.settings = tune_settings_json(call);
  report.settings["devices"] = run.target.devices;
  report.stats = result.stats;
  report.skipped = result.skipped;
  report.forgotten = result.forgotten;
  report.now = internal::unix_now();
  report.flops = job.flops;
  report.bytes = job.bytes;
  add_rows(report, call, result);
  if (!call.request.template_file.empty())
    report.hints =
        unsearched_headers(result, call.request.template_file, job.kernel.tmpl.include_dirs);
  // Tuning ran and nothing ran correctly: no winner. With tuning off the
  // default is the answer.
  const bool failed =
      result.source == ResultSource::kFailed || result.source == ResultSource::kFallback;
  finish_report(report, failed ? Config() : result.config, job.kernel.tmpl.space.default_config());
  return report;
}

void print_report(const TuneReport& report, bool json) {
  if (!json) {
    report.print(stdout);
    return;
  }
  nlohmann::json out = report.to_json();
  // This process's traffic with the remote cache tier, when one is set:
  // hits, misses, refusals, errors, bytes (what a CI log wants to see).
  if (RemoteCache* remote = RemoteCache::global()) out["remote_cache"] = remote->stats().to_json();
  std::cout << out.dump(2) << "\n";
}

int run_tune(TuneCall call) {
  if (call.request.shape.empty()) {
    std::fprintf(stderr, "kiln tune: --shape is required\n");
    return 2;
  }
  if (!trace_directory_exists(call.options.pipeline.trace_path)) return 2;
  call.request.seed = call.options.search.seed;  // --seed seeds the input data too
  if (!call.distributed.empty())
    return run_distributed_tune(call.request, call.options, call.distributed, call.json);
  auto run = tune_request(call.request, call.options, Options::global());
  if (!run.ok()) return report_failure(run.error());
  const TuneReport report = report_of(call, *run);
  print_report(report, call.json);
  return report.winner ? 0 : 1;
}

// One --search at most (a usage error, thrown: exit 2).
void check_one_search(const CLI::App& cmd, const TuneCall& call) {
  if (call.searches_given.size() > 1) {
    std::string given;
    for (const std::string& name : call.searches_given) given += (given.empty() ? "" : ", ") + name;
    throw CLI::ValidationError(cmd.get_option("--search")->get_name(),
                               "given " + std::to_string(call.searches_given.size()) + " times (" +
                                   given + "): give one search strategy");
  }
}

// What the flags cannot say alone: usage errors (thrown, exit 2).
void check_tune_flags(const CLI::App& cmd, const TuneCall& call) {
  // --effort sizes the plan of --search auto; a named strategy bypasses
  // the plan, so --effort was ignored (--search exhaustive --effort quick
  // measured every config, --search random --effort full 64).
  const std::string& search = call.options.search.strategy;
  if (search != kAutoSearch && cmd.get_option("--effort")->count() > 0)
    throw CLI::ValidationError(
        "--effort", std::string("--effort ") + search_effort_name(call.options.search.effort) +
                        " sizes --search auto's plan, which --search " + search +
                        " bypasses: drop --effort, or size --search " + search +
                        " with --max-configs N");
  pacing_needs_steering(cmd, {search});
  if (call.options.measure.min_reps > call.options.measure.max_reps)
    throw CLI::ValidationError(
        "--min-reps", "--min-reps " + std::to_string(call.options.measure.min_reps) +
                          " is above --max-reps " + std::to_string(call.options.measure.max_reps));
}

}  // namespace

void add_tune_command(CLI::App& app, int& exit_code) {
  auto call = std::make_shared<TuneCall>();
  CLI::App* cmd = app.add_subcommand(
      "tune", "Tune a shipped kernel (--kernel) or your own (--template/--space) for a shape");
  add_tune_flags(*cmd, *call);
  cmd->callback([call, cmd, &exit_code] {
    // --search list (or help) prints and exits 0, here and not as it is
    // parsed, so that a --json after it is known: it printed text then.
    check_one_search(*cmd, *call);
    const std::string& search = call->options.search.strategy;
    if (search == "list" || search == "help") {
      print_search_strategies(stdout, call->json);
      exit_code = 0;
      return;
    }
    // --effort alone asks for the auto plan, whatever KILN_SEARCH says.
    if (call->searches_given.empty() && cmd->get_option("--effort")->count() > 0)
      call->options.search.strategy = kAutoSearch;
    check_tune_flags(*cmd, *call);
    exit_code = run_tune(*call);
  });
}

}  // namespace kiln::tool
