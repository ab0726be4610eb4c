// kiln tune --kernel NAME --shape M=..,N=..,K=.. [--dtype D] [--backend auto|cuda|cpu]
//           [--devices LIST] [--no-pipeline] [--group-size G] [--threads N]
//           [--budget-s S] [--max-configs N] [--search auto|NAME|list]
//           [--effort quick|default|full] [--isolation process|thread|auto]
//           [--warm-start N] [--warm-start-devices this|any] [--finalists N]
//           [--in-flight N | --rounds N]
//           [--trace FILE] [--json] ...
// kiln tune --template FILE --space FILE.json [--entry EXPR] --shape ...
// kiln tune --recorded FILE.json[.gz] [--search S] [--warm-from FILE...] ...
//           (tune_recorded.hpp)
// Tunes a shipped kernel, or the user's own, on a realistic call of that
// shape: prints every config's status and times, the winner and its speedup
// over the default config, and the statistics. The winner is saved, so the
// same command again is served from the tuning cache on disk.
// Exit codes: 0 a winner; 1 nothing ran correctly, or the backend, device or
// benchmark worker is missing; 2 bad input (docs/user-kernels.md, `kiln kernels`).

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "kiln/cache/remote_cache.hpp"
#include "kiln/kernels/tune_request.hpp"
#include "kiln/backends/toolchain.hpp"
#include "kiln/tuner/search_plan.hpp"
#include "option_checks.hpp"
#include "tune_distributed.hpp"
#include "tune_recorded.hpp"
#include "tune_report.hpp"
#include "tuner/failure_evidence.hpp"

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

// The flags of `kiln tune`.
struct TuneArgs {
  TuneRequest request;                // what to tune: kernel, shape, backend, devices, reference
  std::string isolation = "process";  // benchmark workers: process, thread or auto
  bool no_pipeline = false;
  std::size_t group_size = 0;
  int threads = 0;
  double budget_s = 0;
  std::size_t max_configs = 0;
  std::string search{kAutoSearch};
  std::vector<std::string> searches_given;  // each --search, to refuse a second one
  std::string effort = "default";           // read with search "auto" (kiln/tuner/search_plan.hpp)
  std::uint64_t seed = 0;
  std::size_t warm_start = SearchOptions{}.warm_start;
  std::string warm_start_devices = warm_start_devices_name(SearchOptions{}.warm_start_devices);
  std::size_t finalists = SearchOptions{}.finalists;
  SearchPacing pacing;  // --in-flight / --rounds
  bool no_check = false;
  bool retune = false;
  bool cold_l2 = false, graphs = false;  // timing: TuneOptions::measure
  double delay_us = 0;
  double early_stop = MeasureOptions{}.early_stop;
  std::string trace;
  bool json = false;
  std::string distributed;             // a strategy: every rank of an MPI job tunes together
  std::string recorded;                // a recorded space to replay (tune_recorded.hpp)
  std::vector<std::string> warm_from;  // with it: other devices' recorded spaces
};

// `--recorded FILE`: the same flags, on a replayed space.
int run_recorded(const TuneArgs& a) {
  return run_tune_recorded({.file = a.recorded,
                            .search = a.search,
                            .effort = a.effort,
                            .max_configs = a.max_configs,
                            .budget_s = a.budget_s,
                            .threads = a.threads,
                            .seed = a.seed,
                            .no_pipeline = a.no_pipeline,
                            .group_size = a.group_size,
                            .pacing = a.pacing,
                            .warm_from = a.warm_from,
                            .warm_start = a.warm_start,
                            .warm_start_devices = a.warm_start_devices,
                            .json = a.json});
}

TuneOptions tune_options(const TuneArgs& a) {
  TuneOptions o;
  o.pipeline.overlap = !a.no_pipeline;
  o.pipeline.group_size = a.group_size;
  o.pipeline.compile_threads = a.threads;
  o.search.strategy = a.search;
  o.search.max_configs = a.max_configs;
  o.search.effort = parse_search_effort(a.effort).value_or(SearchEffort::kDefault);
  o.search.seed = a.seed;
  o.search.warm_start = a.warm_start;
  o.search.warm_start_devices =
      parse_warm_start_devices(a.warm_start_devices).value_or(WarmStartDevices::kAny);
  o.search.finalists = a.finalists;
  o.search.batch = a.pacing.batch;
  o.search.in_flight = a.pacing.in_flight;
  o.pipeline.budget_seconds = a.budget_s;
  o.pipeline.trace_path = a.trace;
  o.check.enabled = !a.no_check;
  o.cache.retune = a.retune;
  o.measure.cold_l2 = a.cold_l2;
  o.measure.graphs = a.graphs;
  o.measure.delay_us = a.delay_us;
  o.measure.early_stop = a.early_stop;
  return o;
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

// The options the run used, for the JSON report.
nlohmann::json settings_json(const TuneArgs& a, const TuningTarget& target) {
  return {{"pipeline", !a.no_pipeline},   {"group_size", a.group_size},
          {"threads", a.threads},         {"search", a.search},
          {"max_configs", a.max_configs}, {"seed", a.seed},
          {"effort", a.effort},           {"budget_s", a.budget_s},
          {"check", !a.no_check},         {"retune", a.retune},
          {"cold_l2", a.cold_l2},         {"graphs", a.graphs},
          {"delay_us", a.delay_us},       {"early_stop", a.early_stop},
          {"devices", target.devices},    {"isolation", a.isolation},
          {"warm_start", a.warm_start},   {"warm_start_devices", a.warm_start_devices},
          {"finalists", a.finalists},     {"in_flight", a.pacing.in_flight},
          {"rounds", a.pacing.batch}};
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

int run_tune(TuneArgs args) {
  if (!args.recorded.empty()) return run_recorded(args);
  if (args.request.shape.empty()) {
    std::fprintf(stderr, "kiln tune: --shape is required (or --recorded FILE to replay one)\n");
    return 2;
  }
  // A trace is written at the end: a directory that is not there is said
  // now, before the tuning, not after it in a warning.
  if (!args.trace.empty()) {
    std::filesystem::path dir = std::filesystem::path(args.trace).parent_path();
    if (dir.empty()) dir = ".";
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec)) {
      std::fprintf(stderr,
                   "kiln tune: cannot write the trace to %s: %s is not a directory; give "
                   "--trace a path in a writable directory\n",
                   args.trace.c_str(), dir.c_str());
      return 2;
    }
  }
  args.request.seed = args.seed;
  args.request.isolation = args.isolation == "thread" ? Isolation::kThread
                           : args.isolation == "auto" ? Isolation::kAuto
                                                      : Isolation::kProcess;
  if (!args.distributed.empty())
    return run_distributed_tune(args.request, tune_options(args), args.distributed, args.json);
  auto run = tune_request(args.request, tune_options(args), Options::global());
  if (!run.ok()) return report_failure(run.error());
  const TuneJob* job = &run->job;
  const TuningTarget* target = &run->target;
  const TuneResult* result = &run->result;
  TuneReport report;
  report.kernel = job->name;
  report.template_name = job->kernel.tmpl.name;
  report.backend = backend_kind_name(job->backend);
  const DeviceProperties& props = target->device->properties();
  report.device = {{"name", props.name}, {"arch", props.arch}, {"ref", props.ref.to_string()}};
  report.shape = job->shape;
  report.dims = job->dims;
  report.dtype = job->dtype;
  report.source = source_name(result->source);
  // A cached winner was checked when it was tuned, not now (its record says
  // against what, below).
  if (!result->measurements.empty()) {
    report.reference = result->reference.name();
    report.reference_detail = result->reference.kind == ReferenceReport::Kind::kUser
                                  ? job->reference_text
                                  : result->reference.detail;
    report.saved = result->saved;
    report.not_saved_reason = result->not_saved_reason;
  }
  report.settings = settings_json(args, *target);
  report.stats = result->stats;
  report.skipped = result->skipped;
  report.forgotten = result->forgotten;
  report.now = internal::unix_now();
  report.flops = job->flops;
  report.bytes = job->bytes;
  const bool served_from_cache =
      result->source == ResultSource::kMemory || result->source == ResultSource::kDisk;
  if (!served_from_cache) {
    report.rows = rows_from(result->measurements);
    // Only a trace that was written is reported (the writer warned if not).
    std::error_code ec;
    if (!args.trace.empty() && std::filesystem::is_regular_file(args.trace, ec))
      report.trace_path = args.trace;
  } else if (result->record) {
    // Served from the cache: the record it was served from has the table.
    report.rows = rows_from(*result->record);
    report.reference = result->record->reference;
    if (!result->record->reference.empty()) report.reference_detail = "when it was tuned";
  }
  if (!args.request.template_file.empty())
    report.hints =
        unsearched_headers(*result, args.request.template_file, job->kernel.tmpl.include_dirs);
  const Config def = job->kernel.tmpl.space.default_config();
  // Tuning ran and nothing ran correctly: no winner. With tuning off the
  // default is the answer.
  const bool failed =
      result->source == ResultSource::kFailed || result->source == ResultSource::kFallback;
  finish_report(report, failed ? Config() : result->config, def);

  if (args.json) {
    nlohmann::json out = report.to_json();
    // This process's traffic with the remote cache tier, when one is set:
    // hits, misses, refusals, errors, bytes (what a CI log wants to see).
    if (RemoteCache* remote = RemoteCache::global())
      out["remote_cache"] = remote->stats().to_json();
    std::cout << out.dump(2) << "\n";
  } else {
    report.print(stdout);
  }
  return report.winner ? 0 : 1;
}

}  // namespace

void add_tune_command(CLI::App& app, int& exit_code) {
  auto a = std::make_shared<TuneArgs>();
  CLI::App* cmd = app.add_subcommand(
      "tune", "Tune a shipped kernel (--kernel) or your own (--template/--space) for a shape");
  cmd->add_option("--kernel", a->request.kernel,
                  "Shipped kernel or family: gemm_f32, fused_add_rmsnorm, gemm_f16, gemm_bf16, "
                  "fused_add_rmsnorm_f16, fused_add_rmsnorm_bf16, softmax_f16, softmax_bf16, "
                  "gemm, softmax (`kiln kernels` lists them)");
  cmd->add_option("--template", a->request.template_file,
                  "Your kernel's template source (C++ or CUDA)");
  cmd->add_option("--space", a->request.space_file,
                  "Your kernel's spec: config space, launch rule, arguments "
                  "(docs/user-kernels.md)");
  cmd->add_option("--entry", a->request.entry,
                  "Entry expression with {PARAM} placeholders, e.g. 'ns::kern<{BM},{BN}>'");
  cmd->add_option("--shape", a->request.shape, "Problem dims, e.g. M=512,N=512,K=512");
  cmd->add_option("--dtype", a->request.dtype, "Input dtype of a shipped kernel (f32, f16, bf16)");
  cmd->add_option("--backend", a->request.backend,
                  "auto (CUDA when a device is present), cuda or cpu")
      ->check(CLI::IsMember({"auto", "cuda", "cpu"}));
  cmd->add_option("--devices", a->request.devices,
                  "Benchmark devices, one worker each: 0,1 or cuda:0,cuda:1 (default: 0)");
  cmd->add_flag("--no-pipeline", a->no_pipeline,
                "Compile every config, then benchmark (to measure what the pipeline gains)");
  cmd->add_option("--group-size", a->group_size,
                  "Configs per compiled program (default: KILN_GROUP_SIZE, else 8)")
      ->transform(integer_in(0, kMaxGroupSize, "0: KILN_GROUP_SIZE, else 8"));
  cmd->add_option("--threads", a->threads,
                  "Compile workers (default: KILN_COMPILE_THREADS, else one per core)")
      ->transform(integer_in(0, kMaxThreads, "0: KILN_COMPILE_THREADS, else one per core"));
  cmd->add_option("--budget-s", a->budget_s, "Time budget for the whole tuning, in seconds")
      ->check(number_in(0, kMaxBudgetSeconds, "0: no budget"));
  cmd->add_option("--max-configs", a->max_configs,
                  "Configs measured at most, the default included (0: all)")
      ->transform(integer_in(0, kMaxConfigs, "0: all"));
  CLI::Option* search =
      cmd->add_option("--search", a->search,
                      "Search strategy: auto (default: exhaustive when the --effort budget covers "
                      "the space, else hybrid), " +
                          search_strategy_names() + "; `--search list` describes them")
          ->check(search_name(/*with_list=*/true))
          ->trigger_on_parse()
          ->each([a](const std::string& name) { a->searches_given.push_back(name); });
  cmd->add_option("--warm-start", a->warm_start,
                  "Measure first the winners of up to N neighbouring shapes of this kernel in "
                  "the tuning cache, nearest first (default 3; 0: off)")
      ->transform(integer_in(0, kMaxConfigs, "0: off"));
  cmd->add_option("--warm-start-devices", a->warm_start_devices,
                  "Whose winners seed the warm start: this device's only, or any (default: "
                  "this device's first, then what other devices found fast for the kernel, "
                  "from a shared cache)")
      ->check(CLI::IsMember({"this", "any"}));
  cmd->add_option("--finalists", a->finalists,
                  "Benchmark the N fastest again at the end, interleaved and in full, and "
                  "choose the winner from that (default 3; 0: off)")
      ->transform(integer_in(0, kMaxConfigs, "0: off"));
  auto* in_flight = cmd->add_option("--in-flight", a->pacing.in_flight,
                                    "Steered searches: configs kept compiling and benchmarking, "
                                    "one more proposed as each result lands (default 3)")
                        ->transform(integer_in(1, kMaxConfigs));
  cmd->add_option("--rounds", a->pacing.batch,
                  "Steered searches: propose N configs at a time and wait for all N before "
                  "proposing more, instead of --in-flight")
      ->transform(integer_in(1, kMaxConfigs))
      ->excludes(in_flight);
  cmd->add_option("--effort", a->effort,
                  "How much of the space --search auto measures: quick (1%, 16-128 configs), "
                  "default (3%, 64-512) or full (all); --max-configs overrides the budget")
      ->check(CLI::IsMember({"quick", "default", "full"}));
  cmd->add_option("--seed", a->seed, "Seed of the random search and of the input data")
      ->transform(integer_in(0, UINT64_MAX));
  cmd->add_option("--reference", a->request.reference,
                  "Check outputs against: auto (host code when cheap, else the default "
                  "config), host or default")
      ->check(CLI::IsMember({"auto", "host", "default"}));
  cmd->add_flag("--no-check", a->no_check, "Do not check outputs against a reference");
  cmd->add_flag("--retune,--force", a->retune,
                "Tune even when the tuning cache has a result (and replace it)");
  cmd->add_flag("--cold-l2", a->cold_l2,
                "Start every timed repetition with cold caches: the GPU's L2 flushed, on the "
                "CPU the kernel's arguments evicted (docs/autotuning.md)");
  cmd->add_flag("--graphs", a->graphs,
                "Time a replayed captured graph of the launch (strips launch overhead)");
  cmd->add_option("--delay-us", a->delay_us,
                  "Occupy the stream this long before each timed launch, so host launch "
                  "overhead stays out of the timing")
      ->check(number_in(0, kMaxDelayMicroseconds));
  cmd->add_option("--early-stop", a->early_stop,
                  "Stop timing a config after 3 repetitions when its fastest is this many times "
                  "the best median so far (default 1.5; 0: time every config in full)")
      ->check(number_in(0, 1000))
      ->check(CLI::Validator(
          [](std::string& text) -> std::string {
            const double v = std::stod(text);
            return v == 0 || v >= 1 ? ""
                                    : "--early-stop " + text +
                                          " would stop configs faster "
                                          "than the best: give 0 (off) or "
                                          "a factor of 1 or more";
          },
          "FACTOR"));
  cmd->add_option("--isolation", a->isolation,
                  "Benchmark worker: process (default: a crashing or hanging config costs only "
                  "its worker; an error if the worker is missing or broken), thread (in kiln's "
                  "own process) or auto (process, else thread with a warning, unless KILN_WORKER "
                  "names the worker)")
      ->check(CLI::IsMember({"process", "thread", "auto"}));
  cmd->add_option("--trace", a->trace, "Write a Chrome/Perfetto trace of the run to FILE");
  cmd->add_flag("--json", a->json, "Print one JSON document (and nothing else) on stdout");
  cmd->add_option("--distributed", a->distributed,
                  "Under mpirun: tune with every rank (independent, broadcast, parallel, merge)");
  cmd->add_option("--recorded", a->recorded,
                  "Replay a recorded space (a Kernel Tuner cache, T4 or KTT output file, .json, "
                  ".json.gz or a .zip of one, or "
                  "`kiln cache export --format kernel-tuner` output) on a virtual clock: "
                  "--budget-s and --threads (default 1) are then simulated")
      ->check(CLI::ExistingFile)  // "" or a directory: named here, not as "--shape is required"
      ->excludes("--kernel")
      ->excludes("--template")
      ->excludes("--distributed");
  cmd->add_option("--warm-from", a->warm_from,
                  "With --recorded: other devices' recorded spaces of the kernel, standing in "
                  "for a shared tuning cache; a warm start measures first what they found fast "
                  "(--warm-start N seeds, default 3)")
      ->check(CLI::ExistingFile)
      ->needs("--recorded");
  // What a replay has no use for is refused beside --recorded rather than
  // silently ignored: there is no kernel, device or output to check, no
  // tuning cache to replace (--retune; --warm-from stands in for one to
  // warm-start from), and
  // run_tune_recorded does not pass --finalists or --early-stop on (a
  // recorded time reads the same at every repetition: nothing to re-measure
  // or cut short).
  for (const char* physical :
       {"--space", "--entry", "--shape", "--dtype", "--backend", "--devices", "--trace",
        "--reference", "--no-check", "--cold-l2", "--graphs", "--delay-us", "--isolation",
        "--finalists", "--early-stop", "--retune"})
    cmd->get_option("--recorded")->excludes(physical);
  // trigger_on_parse clears --search at each occurrence, so CLI11's
  // at-most-once check, which every other option has, never fires: a second
  // --search silently replaced the first. Each is kept and counted here.
  cmd->preparse_callback([a](std::size_t) { a->searches_given.clear(); });
  cmd->callback([a, cmd, search, &exit_code] {
    if (a->searches_given.size() > 1) {
      std::string given;
      for (const std::string& name : a->searches_given) given += (given.empty() ? "" : ", ") + name;
      throw CLI::ValidationError(search->get_name(),
                                 "given " + std::to_string(a->searches_given.size()) + " times (" +
                                     given + "): give one search strategy");
    }
    // --search list (or help) prints and exits 0, here and not as it is
    // parsed, so that a --json after it is known: it printed text then.
    if (a->search == "list" || a->search == "help") {
      print_search_strategies(stdout, a->json);
      exit_code = 0;
      return;
    }
    // --effort sizes the plan of --search auto; a named strategy bypasses
    // the plan, so --effort was ignored (--search exhaustive --effort quick
    // measured every config, --search random --effort full 64).
    if (a->search != kAutoSearch && cmd->get_option("--effort")->count() > 0)
      throw CLI::ValidationError(
          "--effort", "--effort " + a->effort + " sizes --search auto's plan, which --search " +
                          a->search + " bypasses: drop --effort, or size --search " + a->search +
                          " with --max-configs N");
    pacing_needs_steering(*cmd, {a->search});
    // A replay's warm start reads the --warm-from files alone: without them
    // the warm-start flags would change nothing.
    if (!a->recorded.empty() && a->warm_from.empty()) {
      for (const char* flag : {"--warm-start", "--warm-start-devices"})
        if (cmd->get_option(flag)->count() > 0)
          throw CLI::ValidationError(flag, std::string(flag) +
                                               " with --recorded seeds from the --warm-from "
                                               "files: give them, or drop " +
                                               flag);
    }
    exit_code = run_tune(*a);
  });
}

}  // namespace kiln::tool
