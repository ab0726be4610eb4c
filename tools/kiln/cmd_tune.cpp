// kiln tune --kernel NAME --shape M=..,N=..,K=.. [--dtype D] [--backend auto|cuda|cpu]
//           [--devices LIST] [--no-pipeline] [--group-size G] [--threads N]
//           [--budget-s S] [--max-configs N] [--isolation process|thread|auto]
//           [--trace FILE] [--json] ...
// kiln tune --template FILE --space FILE.json [--entry EXPR] --shape ...
// Tunes a shipped kernel, or the user's own, on a realistic call of that
// shape: prints every config's status and times, the winner and its speedup
// over the default config, and the statistics. The winner is saved, so the
// same command again is served from the tuning cache on disk.
// Exit codes: 0 a winner; 1 nothing ran correctly, or the backend, device or
// benchmark worker is missing; 2 bad input (docs/user-kernels.md, `kiln kernels`).

#include <cstdio>
#include <iostream>

#include "commands.hpp"
#include "kiln/cache/artifact_cache.hpp"
#include "kiln/cache/tuning_cache.hpp"
#include "kiln/runtime/toolchain.hpp"
#include "option_checks.hpp"
#include "tune_job.hpp"
#include "tune_report.hpp"

namespace kiln::tool {

namespace {

SearchKind search_kind(const std::string& name) {
  if (name == "random") return SearchKind::kRandom;
  if (name == "annealing") return SearchKind::kAnnealing;
  return SearchKind::kExhaustive;
}

TuneOptions tune_options(const TuneArgs& a, const TuneJob& job) {
  TuneOptions o;
  o.pipeline = !a.no_pipeline;
  o.group_size = a.group_size;
  o.compile_threads = a.threads;
  o.search = search_kind(a.search);
  o.max_configs = a.max_configs;
  o.seed = a.seed;
  o.budget_seconds = a.budget_s;
  o.trace_path = a.trace;
  o.check = !a.no_check;
  o.reference = job.reference;
  o.reference_fn = job.reference_fn;
  o.tolerance = job.tolerance;
  o.retune = a.retune;
  o.cold_l2 = a.cold_l2;
  o.graphs = a.graphs;
  o.delay_us = a.delay_us;
  return o;
}

// The options the run used, for the JSON report.
nlohmann::json settings_json(const TuneArgs& a, const TuningTarget& target) {
  return {{"pipeline", !a.no_pipeline}, {"group_size", a.group_size},   {"threads", a.threads},
          {"search", a.search},         {"max_configs", a.max_configs}, {"seed", a.seed},
          {"budget_s", a.budget_s},     {"check", !a.no_check},         {"retune", a.retune},
          {"cold_l2", a.cold_l2},       {"graphs", a.graphs},           {"delay_us", a.delay_us},
          {"devices", target.devices},  {"isolation", a.isolation}};
}

int run_tune(const TuneArgs& args) {
  auto job = make_tune_job(args);
  if (!job.ok()) {
    std::fprintf(stderr, "kiln tune: %s\n", job.error().message.c_str());
    return job.error().code == ErrorCode::kUnavailable ? 1 : 2;
  }
  auto target = open_tuning_target(job->backend, current_toolchain(job->backend), job->devices);
  if (!target.ok()) {
    std::string fix;
    if (!job->cpu_alternative.empty())
      fix = " (--backend cpu --kernel " + job->cpu_alternative + ")";
    else if (job->user && job->backend == BackendKind::kCuda)
      fix = " (for a CPU version of the kernel, set \"backend\": \"cpu\" in its spec)";
    std::fprintf(stderr, "kiln tune: %s needs a %s device: %s%s\n", job->name.c_str(),
                 job->backend == BackendKind::kCuda ? "CUDA" : "CPU",
                 target.error().message.c_str(), fix.c_str());
    return target.error().code == ErrorCode::kInvalidArgument ? 2 : 1;
  }
  auto call = make_call(*target->device, job->args, job->shape, args.seed);
  if (!call.ok()) {
    std::fprintf(stderr, "kiln tune: cannot set up the call: %s\n",
                 call.error().describe().c_str());
    // A shape too large for the device is bad input; a device failure is not.
    return call.error().code == ErrorCode::kInvalidArgument ? 2 : 1;
  }
  target->backend.isolation = args.isolation == "thread" ? Isolation::kThread
                              : args.isolation == "auto" ? Isolation::kAuto
                                                         : Isolation::kProcess;
  TuningCache tunings(Options::global());
  ArtifactCache artifacts(Options::global());
  Autotuner tuner(target->backend, &artifacts, &tunings);
  const TuneOptions options = tune_options(args, *job);
  auto tuned = [&]() -> Result<TuneResult> {
    try {
      return tuner.tune(job->kernel, call->args, *target->device, options);
    } catch (const Error& e) {
      return e.info();  // a benchmark worker that is missing or broken
    }
  };
  auto result = tuned();
  if (!result.ok()) {
    std::fprintf(stderr, "kiln tune: %s\n", result.error().describe().c_str());
    return 1;
  }
  TuneReport report;
  report.kernel = job->name;
  report.template_name = job->kernel.tmpl.name;
  report.backend = backend_kind_name(job->backend);
  const DeviceProperties& props = target->device->properties();
  report.device = {{"name", props.name}, {"arch", props.arch}, {"ref", props.ref.to_string()}};
  report.shape = job->shape;
  report.dims = job->dims;
  report.dtype = job->dtype;
  report.source = result->source;
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
  report.flops = job->flops;
  report.bytes = job->bytes;
  if (result->source == "tuned" || result->source == "default" || result->source == "failed") {
    report.rows = rows_from(result->measurements);
    if (!args.trace.empty()) report.trace_path = args.trace;
  } else {
    // Served from the cache: the stored record has the table.
    const TuningIdentity identity{definition_hash(job->kernel), device_identity(*target->device),
                                  target->backend.toolchain, CacheEnvRegistry::global().snapshot()};
    if (auto record = tunings.lookup(problem_key(job->kernel.tmpl.name, call->args), identity)) {
      report.rows = rows_from(*record);
      report.reference = record->reference;
      if (!record->reference.empty()) report.reference_detail = "when it was tuned";
    }
  }
  const Config def = job->kernel.tmpl.space.default_config();
  // "default" after measuring means nothing ran correctly (no winner);
  // without measuring, tuning is off (KILN_TUNING=0) and the default is the answer.
  const bool failed =
      result->source == "failed" || (result->source == "default" && !result->measurements.empty());
  finish_report(report, failed ? Config() : result->config, def);

  if (args.json) {
    std::cout << report.to_json().dump(2) << "\n";
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
  cmd->add_option("--kernel", a->kernel,
                  "Shipped kernel or family: gemm_f32, fused_add_rmsnorm, gemm_f16, gemm_bf16, "
                  "fused_add_rmsnorm_f16, fused_add_rmsnorm_bf16, softmax_f16, softmax_bf16, "
                  "gemm, softmax (`kiln kernels` lists them)");
  cmd->add_option("--template", a->template_file, "Your kernel's template source (C++ or CUDA)");
  cmd->add_option("--space", a->space_file,
                  "Your kernel's spec: config space, launch rule, arguments "
                  "(docs/user-kernels.md)");
  cmd->add_option("--entry", a->entry,
                  "Entry expression with {PARAM} placeholders, e.g. 'ns::kern<{BM},{BN}>'");
  cmd->add_option("--shape", a->shape, "Problem dims, e.g. M=512,N=512,K=512")->required();
  cmd->add_option("--dtype", a->dtype, "Input dtype of a shipped kernel (f32, f16, bf16)");
  cmd->add_option("--backend", a->backend, "auto (CUDA when a device is present), cuda or cpu")
      ->check(CLI::IsMember({"auto", "cuda", "cpu"}));
  cmd->add_option("--devices", a->devices,
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
  cmd->add_option("--search", a->search, "exhaustive (default), random or annealing")
      ->check(CLI::IsMember({"exhaustive", "random", "annealing"}));
  cmd->add_option("--seed", a->seed, "Seed of the random search and of the input data")
      ->transform(integer_in(0, UINT64_MAX));
  cmd->add_option("--reference", a->reference,
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
  cmd->add_option("--isolation", a->isolation,
                  "Benchmark worker: process (default: a crashing or hanging config costs only "
                  "its worker; an error if the worker is missing or broken), thread (in kiln's "
                  "own process) or auto (process, else thread with a warning, unless KILN_WORKER "
                  "names the worker)")
      ->check(CLI::IsMember({"process", "thread", "auto"}));
  cmd->add_option("--trace", a->trace, "Write a Chrome/Perfetto trace of the run to FILE");
  cmd->add_flag("--json", a->json, "Print one JSON document (and nothing else) on stdout");
  cmd->callback([a, &exit_code] { exit_code = run_tune(*a); });
}

}  // namespace kiln::tool
