// kiln-lab tune --recorded FILE.json[.gz] [--search S] [--effort E]
//   [--max-configs N] [--budget-s S] [--threads P] [--seed N] [--no-pipeline]
//   [--group-size N] [--in-flight N | --rounds N]
//   [--warm-from FILE... [--warm-start N] [--warm-start-devices this|any]] [--json]
// The flags of `kiln tune` that a replay reads, with their meanings there
// (--budget-s and --threads simulated), on run_tune_recorded
// (tune_recorded.hpp). What a replay has no use for (a kernel, a device, a
// check, a cache) has no flag here.
#include <memory>
#include <string>
#include <vector>

#include "kiln/search/search_plan.hpp"
#include "kiln/tuner/tune_options.hpp"
#include "kiln/tuner/warm_start.hpp"
#include "lab_commands.hpp"
#include "option_checks.hpp"
#include "tune_recorded.hpp"

namespace kiln::tool {

namespace {

struct Args {
  RecordedTuneArgs run;
  std::vector<std::string> searches_given;  // each --search, to refuse a second one
};

void add_search_options(CLI::App& cmd, const std::shared_ptr<Args>& a) {
  RecordedTuneArgs& r = a->run;
  cmd.add_option("--search", r.search,
                 "Search strategy: auto (default: exhaustive when the --effort budget covers "
                 "the space, else hybrid), " +
                     search_strategy_names() + " (`kiln tune --search list` describes them)")
      ->check(search_name(/*with_list=*/false))
      ->trigger_on_parse()
      ->each([a](const std::string& name) { a->searches_given.push_back(name); });
  cmd.add_option("--effort", r.effort,
                 "How much of the space --search auto measures: quick (1%, 16-128 configs), "
                 "default (3%, 64-512) or full (all); --max-configs overrides the budget")
      ->check(CLI::IsMember({"quick", "default", "full"}));
  cmd.add_option("--max-configs", r.max_configs,
                 "Configs measured at most, the default included (0: all)")
      ->transform(integer_in(0, kMaxConfigs, "0: all"));
  cmd.add_option("--seed", r.seed, "Seed of the random search")
      ->transform(integer_in(0, UINT64_MAX));
  auto* in_flight = cmd.add_option("--in-flight", r.pacing.in_flight,
                                   "Steered searches: configs kept compiling and benchmarking, "
                                   "one more proposed as each result lands (default 3)")
                        ->transform(integer_in(1, kMaxConfigs));
  cmd.add_option("--rounds", r.pacing.batch,
                 "Steered searches: propose N configs at a time and wait for all N before "
                 "proposing more, instead of --in-flight")
      ->transform(integer_in(1, kMaxConfigs))
      ->excludes(in_flight);
}

void add_replay_options(CLI::App& cmd, RecordedTuneArgs& r) {
  cmd.add_option("--recorded", r.file,
                 "The recorded space to replay (a Kernel Tuner cache, T4 or KTT output file, "
                 ".json, .json.gz or a .zip of one, or `kiln cache export --format "
                 "kernel-tuner` output) on a virtual clock")
      ->required()
      ->check(CLI::ExistingFile);
  cmd.add_option("--budget-s", r.budget_s, "Budget of the whole tuning, in simulated seconds")
      ->check(number_in(0, kMaxBudgetSeconds, "0: no budget"));
  cmd.add_option("--threads", r.threads, "Simulated compile workers (default 1)")
      ->transform(integer_in(0, kMaxThreads, "0: 1"));
  cmd.add_flag("--no-pipeline", r.no_pipeline,
               "Compile every config, then benchmark (to measure what the pipeline gains)");
  cmd.add_option("--group-size", r.group_size,
                 "Configs per compiled program (default 1, each compiled alone as recorded)")
      ->transform(integer_in(0, kMaxGroupSize, "0: 1"));
  cmd.add_option("--warm-from", r.warm_from,
                 "Other devices' recorded spaces of the kernel, standing in for a shared tuning "
                 "cache; a warm start measures first what they found fast (--warm-start N "
                 "seeds, default 3)")
      ->check(CLI::ExistingFile);
  cmd.add_option("--warm-start", r.warm_start,
                 "Measure first the winners of up to N neighbouring shapes of this kernel in "
                 "the --warm-from files, nearest first (default 3; 0: off)")
      ->transform(integer_in(0, kMaxConfigs, "0: off"))
      ->needs("--warm-from");
  cmd.add_option("--warm-start-devices", r.warm_start_devices,
                 "Whose winners seed the warm start: this device's only, or any")
      ->check(CLI::IsMember({"this", "any"}))
      ->needs("--warm-from");
  cmd.add_flag("--json", r.json, "Print one JSON document (and nothing else) on stdout");
}

// The checks `kiln tune` made of these flags, once parsed.
void check_flags(const CLI::App& cmd, const Args& a) {
  if (a.searches_given.size() > 1) {
    std::string given;
    for (const std::string& name : a.searches_given) given += (given.empty() ? "" : ", ") + name;
    throw CLI::ValidationError("--search", "given " + std::to_string(a.searches_given.size()) +
                                               " times (" + given + "): give one search strategy");
  }
  const std::string& search = a.run.search;
  // --effort sizes the plan of --search auto; a named strategy bypasses it.
  if (search != kAutoSearch && cmd.get_option("--effort")->count() > 0)
    throw CLI::ValidationError(
        "--effort", "--effort " + a.run.effort + " sizes --search auto's plan, which --search " +
                        search + " bypasses: drop --effort, or size --search " + search +
                        " with --max-configs N");
  pacing_needs_steering(cmd, {search});
}

}  // namespace

void add_tune_recorded_command(CLI::App& app, int& exit_code) {
  auto a = std::make_shared<Args>();
  a->run.search = kAutoSearch;
  a->run.warm_start = SearchOptions{}.warm_start;
  a->run.warm_start_devices = warm_start_devices_name(SearchOptions{}.warm_start_devices);
  CLI::App* cmd = app.add_subcommand(
      "tune", "Tune a recorded space as if on the GPU that recorded it (a replay)");
  add_replay_options(*cmd, a->run);
  add_search_options(*cmd, a);
  // trigger_on_parse clears --search at each occurrence: each is counted.
  cmd->preparse_callback([a](std::size_t) { a->searches_given.clear(); });
  cmd->callback([a, cmd, &exit_code] {
    check_flags(*cmd, *a);
    exit_code = run_tune_recorded(a->run);
  });
}

}  // namespace kiln::tool
