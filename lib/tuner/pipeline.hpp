// The pipelined tuning run: compile units on the pool, benchmark each
// config on a free worker as soon as its artifact lands, abandon a config
// that passes its benchmark deadline, stop at the budget. Every config in
// ends as exactly one Measurement out. Nothing the caller lent (home,
// progress, artifacts, callbacks) is used after run_pipeline returns.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "bench_plan.hpp"
#include "call_state.hpp"
#include "kiln/compile/compile_engine.hpp"
#include "kiln/device/clock.hpp"
#include "kiln/tuner/tuner.hpp"
#include "measure.hpp"
#include "output_judge.hpp"
#include "run_journal.hpp"
#include "tuner/progress.hpp"
#include "tuner/trace.hpp"

namespace kiln::internal {

struct PipelineInputs {
  TunableKernel kernel;
  ArgList args;
  // Captured before anything ran (the reference run changes in-place args).
  CallState state;
  Reference reference;
  // Set when outputs are judged after the run (the reference is the default
  // config's outputs, or the consensus): every measurement's outputs go to
  // it. Shared by the rounds of one search.
  std::shared_ptr<OutputJudge> judge;
  TuneOptions options;
  Backend backend;
  // Where benchmarks run, decided once per tuning run (plan_benchmarks).
  BenchPlan plan;
  CompileContext context;
  ArtifactCache* artifacts = nullptr;
  // The caller's device (borrowed): measured on when the backend opens no
  // devices of its own, and then a worker hung there is waited for before
  // run_pipeline returns (bench_crew.hpp).
  Device* home = nullptr;
  // Shared: an abandoned worker may still record into it after the run.
  std::shared_ptr<TraceRecorder> trace;
  ProgressBar* progress = nullptr;
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
  // The fastest median earlier rounds of this search measured (0: none):
  // early stop compares each config with it and with this round's best.
  double best_seconds = 0;
  // The finalists will measure the fastest few again in full, so this run
  // times each config for at most early_stop_reps (StopBars::screen).
  bool screen = false;
  // The run's time (borrowed, never null): the real clock, or simulated
  // time for a backend that replays recorded costs (runtime/replay/). The
  // run tells it where work changes hands (units queued, artifacts pushed,
  // workers started) so that simulated time never passes while a config is
  // on its way between threads (kiln/device/clock.hpp).
  PipelineClock* clock = &real_clock();
  // Optional: every valid config where the space is a list (a replay's
  // recorded configs), handed to the search as SearchSetup::listed.
  std::shared_ptr<const std::vector<Config>> listed;
  // Artifacts already built, by Config::key(): configs found here are
  // benchmarked without compiling or asking the artifact cache (finalists
  // measured again, finalists.hpp).
  std::map<std::string, Artifact> ready;
  // Optional: a search fed as results land (search_run.cpp). Called once
  // per result, one call at a time, on the thread that records it and
  // before it counts; the configs it returns join this run. `stopping`: the
  // run is stopping (its budget is spent, it was interrupted, or every
  // config is in) and takes no more, so the call only reports.
  std::function<std::vector<Config>(const Measurement& result, bool stopping)> refill;
  // Optional: the search's journal (run_journal.hpp). A config an earlier
  // run measured lands at once with that measurement; each new result is
  // kept in it.
  std::shared_ptr<RunJournal> journal;
};

struct PipelineOutput {
  std::vector<Measurement> measurements;      // one per config, in completion order
  std::map<std::string, Artifact> artifacts;  // by Config::key(), for configs that compiled
  KernelStats stats;
  // The configs re-measured at the end (finalists.hpp); the winner is among
  // them when any is ok. Empty: finalists off.
  std::vector<Config> finalists;
  // TuneOptions::pipeline.interrupted said so: the run stopped early, and
  // what it measured is not to be saved.
  bool interrupted = false;
  // The search did not finish: interrupted, its budget spent, or a config
  // cancelled. Its journal stays for the next run (run_journal.hpp).
  bool cut_short = false;
  // Configs not measured because they failed before (search_memory.hpp),
  // and remembered failures that no longer stood and were measured again.
  std::vector<FailedConfig> skipped;
  std::vector<ForgottenFailure> forgotten;
};

PipelineOutput run_pipeline(const std::vector<Config>& configs, PipelineInputs inputs);

}  // namespace kiln::internal
