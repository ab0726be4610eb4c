// The table of `kiln tune`'s flags: see tune_flags.hpp.
#include "tune_flags.hpp"

#include <cstdint>
#include <functional>
#include <utility>

#include "kiln/core/options.hpp"
#include "kiln/device/backend.hpp"
#include "kiln/search/search_plan.hpp"
#include "option_checks.hpp"

namespace kiln::tool {

namespace {

// One flag: its CLI11 names and help, the key of its value in the report's
// "settings" (null: not echoed), how it is added bound to its field, and
// that field's value as JSON.
struct TuneFlag {
  std::string names;
  std::string help;
  const char* setting = nullptr;
  std::function<CLI::Option*(CLI::App&, TuneCall&, const TuneFlag&)> add;
  std::function<nlohmann::json(const TuneCall&)> value;
};

using Checks = std::function<void(CLI::Option&)>;

// In the makers below `field` is a generic lambda, (auto& call) -> auto&,
// naming the one field the flag sets: the binding and the echo both read
// it, so a flag's field is written once.

// An option taking a value, checked by `checks`.
template <class Field>
TuneFlag option(std::string names, const char* setting, Field field, std::string help,
                Checks checks = {}) {
  TuneFlag f{std::move(names), std::move(help), setting, {}, {}};
  f.add = [field, checks](CLI::App& cmd, TuneCall& c, const TuneFlag& self) {
    CLI::Option* o = cmd.add_option(self.names, field(c), self.help);
    if (checks) checks(*o);
    return o;
  };
  f.value = [field](const TuneCall& c) { return nlohmann::json(field(c)); };
  return f;
}

// A flag that sets its bool field.
template <class Field>
TuneFlag flag(std::string names, const char* setting, Field field, std::string help) {
  TuneFlag f{std::move(names), std::move(help), setting, {}, {}};
  f.add = [field](CLI::App& cmd, TuneCall& c, const TuneFlag& self) {
    return cmd.add_flag(self.names, field(c), self.help);
  };
  f.value = [field](const TuneCall& c) { return nlohmann::json(field(c)); };
  return f;
}

// A --no-X flag that clears its bool field (X on); "settings" echoes the
// field, true when X is on. `--no-X=false` leaves it on, as a bool flag reads.
template <class Field>
TuneFlag off_flag(std::string names, const char* setting, Field field, std::string help) {
  TuneFlag f{std::move(names), std::move(help), setting, {}, {}};
  f.add = [field](CLI::App& cmd, TuneCall& c, const TuneFlag& self) {
    bool& on = field(c);
    return cmd.add_flag_function(
        self.names, [&on](std::int64_t count) { on = count <= 0; }, self.help);
  };
  f.value = [field](const TuneCall& c) { return nlohmann::json(field(c)); };
  return f;
}

// An option naming one of `choices`, stored as its value; "settings"
// echoes the name.
template <class T, class Field>
TuneFlag choice(std::string names, const char* setting, Field field,
                std::vector<std::pair<std::string, T>> choices, std::string help) {
  TuneFlag f{std::move(names), std::move(help), setting, {}, {}};
  f.add = [field, choices](CLI::App& cmd, TuneCall& c, const TuneFlag& self) {
    T& target = field(c);
    std::vector<std::string> texts;
    for (const auto& [text, value] : choices) texts.push_back(text);
    auto set = [&target, choices](const std::string& given) {
      for (const auto& [text, value] : choices)
        if (text == given) target = value;
    };
    return cmd.add_option_function<std::string>(self.names, set, self.help)
        ->check(CLI::IsMember(texts));
  };
  f.value = [field, choices](const TuneCall& c) {
    for (const auto& [text, value] : choices)
      if (value == field(c)) return nlohmann::json(text);
    return nlohmann::json();
  };
  return f;
}

// What the request names: the kernel, the problem, where it runs.
std::vector<TuneFlag> request_flags() {
  return {
      option(
          "--kernel", nullptr, [](auto& c) -> auto& { return c.request.kernel; },
          "Shipped kernel or family: gemm_f32, fused_add_rmsnorm, gemm_f16, gemm_bf16, "
          "fused_add_rmsnorm_f16, fused_add_rmsnorm_bf16, softmax_f16, softmax_bf16, "
          "gemm, softmax (`kiln kernels` lists them)"),
      option(
          "--template", nullptr, [](auto& c) -> auto& { return c.request.template_file; },
          "Your kernel's template source (C++ or CUDA)"),
      option(
          "--space", nullptr, [](auto& c) -> auto& { return c.request.space_file; },
          "Your kernel's spec: config space, launch rule, arguments "
          "(docs/user-kernels.md)"),
      option(
          "--entry", nullptr, [](auto& c) -> auto& { return c.request.entry; },
          "Entry expression with {PARAM} placeholders, e.g. 'ns::kern<{BM},{BN}>'"),
      option(
          "--shape", nullptr, [](auto& c) -> auto& { return c.request.shape; },
          "Problem dims, e.g. M=512,N=512,K=512"),
      option(
          "--dtype", nullptr, [](auto& c) -> auto& { return c.request.dtype; },
          "Input dtype of a shipped kernel (f32, f16, bf16)"),
      option(
          "--backend", nullptr, [](auto& c) -> auto& { return c.request.backend; },
          "auto (CUDA when a device is present), or a backend by name: cuda, cpu",
          [](CLI::Option& o) {
            o.check(CLI::Validator(
                [](const std::string& name) {
                  return name == "auto" || is_backend_name(name)
                             ? std::string()
                             : find_backend(name).error().message;
                },
                "BACKEND"));
          }),
      option(
          "--devices", nullptr, [](auto& c) -> auto& { return c.request.devices; },
          "Benchmark devices, one worker each: 0,1 or cuda:0,cuda:1 (default: 0)"),
  };
}

// How configs compile and which are measured.
std::vector<TuneFlag> search_flags() {
  return {
      off_flag(
          "--no-pipeline", "pipeline", [](auto& c) -> auto& { return c.options.pipeline.overlap; },
          "Compile every config, then benchmark (to measure what the pipeline gains)"),
      option(
          "--group-size", "group_size",
          [](auto& c) -> auto& { return c.options.pipeline.group_size; },
          "Configs per compiled program (default: KILN_GROUP_SIZE, else 8)",
          [](CLI::Option& o) {
            o.transform(integer_in(0, kMaxGroupSize, "0: KILN_GROUP_SIZE, else 8"));
          }),
      option(
          "--threads", "threads",
          [](auto& c) -> auto& { return c.options.pipeline.compile_threads; },
          "Compile workers (default: KILN_COMPILE_THREADS, else one per core)",
          [](CLI::Option& o) {
            o.transform(integer_in(0, kMaxThreads, "0: KILN_COMPILE_THREADS, else one per core"));
          }),
      option(
          "--budget-s", "budget_s",
          [](auto& c) -> auto& { return c.options.pipeline.budget_seconds; },
          "Time budget for the whole tuning, in seconds",
          [](CLI::Option& o) { o.check(number_in(0, kMaxBudgetSeconds, "0: no budget")); }),
      option(
          "--max-configs", "max_configs",
          [](auto& c) -> auto& { return c.options.search.max_configs; },
          "Configs measured at most, the default included (0: all)",
          [](CLI::Option& o) { o.transform(integer_in(0, kMaxConfigs, "0: all")); }),
      // trigger_on_parse: each --search is seen (add_tune_flags counts them).
      option(
          "--search", "search", [](auto& c) -> auto& { return c.options.search.strategy; },
          "Search strategy: auto (default: exhaustive when the --effort budget covers "
          "the space, else hybrid), " +
              search_strategy_names() + "; `--search list` describes them",
          [](CLI::Option& o) { o.check(search_name(/*with_list=*/true))->trigger_on_parse(); }),
      option(
          "--warm-start", "warm_start",
          [](auto& c) -> auto& { return c.options.search.warm_start; },
          "Measure first the winners of up to N neighbouring shapes of this kernel in "
          "the tuning cache, nearest first (default 3; 0: off)",
          [](CLI::Option& o) { o.transform(integer_in(0, kMaxConfigs, "0: off")); }),
      choice<WarmStartDevices>(
          "--warm-start-devices", "warm_start_devices",
          [](auto& c) -> auto& { return c.options.search.warm_start_devices; },
          {{"this", WarmStartDevices::kThis}, {"any", WarmStartDevices::kAny}},
          "Whose winners seed the warm start: this device's only, or any (default: "
          "this device's first, then what other devices found fast for the kernel, "
          "from a shared cache)"),
      option(
          "--finalists", "finalists", [](auto& c) -> auto& { return c.options.search.finalists; },
          "Benchmark the N fastest again at the end, interleaved and in full, and "
          "choose the winner from that (default 3; 0: off)",
          [](CLI::Option& o) { o.transform(integer_in(0, kMaxConfigs, "0: off")); }),
      option(
          "--in-flight", "in_flight", [](auto& c) -> auto& { return c.options.search.in_flight; },
          "Steered searches: configs kept compiling and benchmarking, "
          "one more proposed as each result lands (default 3)",
          [](CLI::Option& o) { o.transform(integer_in(1, kMaxConfigs)); }),
      option(
          "--rounds", "rounds", [](auto& c) -> auto& { return c.options.search.batch; },
          "Steered searches: propose N configs at a time and wait for all N before "
          "proposing more, instead of --in-flight",
          [](CLI::Option& o) { o.transform(integer_in(1, kMaxConfigs))->excludes("--in-flight"); }),
      choice<SearchEffort>(
          "--effort", "effort", [](auto& c) -> auto& { return c.options.search.effort; },
          {{"quick", SearchEffort::kQuick},
           {"default", SearchEffort::kDefault},
           {"full", SearchEffort::kFull}},
          "How much of the space --search auto measures: quick (1%, 16-128 configs), "
          "default (3%, 64-512) or full (all); --max-configs overrides the budget"),
      option(
          "--seed", "seed", [](auto& c) -> auto& { return c.options.search.seed; },
          "Seed of the random search and of the input data",
          [](CLI::Option& o) { o.transform(integer_in(0, UINT64_MAX)); }),
  };
}

// How many times each config runs, and how long a compile or a benchmark
// may take before it is given up.
std::vector<TuneFlag> measure_flags() {
  return {
      option(
          "--warmup", "warmup", [](auto& c) -> auto& { return c.options.measure.warmup; },
          "Untimed runs of each config before its timed repetitions (default 1)",
          [](CLI::Option& o) { o.transform(integer_in(0, 1'000'000)); }),
      option(
          "--min-reps", "min_reps", [](auto& c) -> auto& { return c.options.measure.min_reps; },
          "Timed repetitions at least, however slow the config (default 3)",
          [](CLI::Option& o) { o.transform(integer_in(1, 1'000'000)); }),
      option(
          "--max-reps", "max_reps", [](auto& c) -> auto& { return c.options.measure.max_reps; },
          "Timed repetitions at most (default 100)",
          [](CLI::Option& o) { o.transform(integer_in(1, 1'000'000)); }),
      option(
          "--target-s", "target_s",
          [](auto& c) -> auto& { return c.options.measure.target_seconds; },
          "Kernel time each config's repetitions fill, in seconds (default 0.05)",
          [](CLI::Option& o) { o.check(number_in(0, kMaxBudgetSeconds)); }),
      option(
          "--compile-deadline-s", "compile_deadline_s",
          [](auto& c) -> auto& { return c.options.pipeline.compile_deadline_seconds; },
          "A compile unit still compiling after this many seconds is cancelled (default 120)",
          [](CLI::Option& o) { o.check(number_in(0.001, kMaxBudgetSeconds)); }),
      option(
          "--bench-deadline-s", "bench_deadline_s",
          [](auto& c) -> auto& { return c.options.pipeline.bench_deadline_seconds; },
          "A config's benchmark still running after this many seconds is abandoned as "
          "hung, recorded timeout (default 10)",
          [](CLI::Option& o) { o.check(number_in(0.001, kMaxBudgetSeconds)); }),
  };
}

// --early-stop below 1 would stop configs faster than the best.
CLI::Validator early_stop_factor() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        const double v = std::stod(text);
        return v == 0 || v >= 1 ? ""
                                : "--early-stop " + text +
                                      " would stop configs faster "
                                      "than the best: give 0 (off) or "
                                      "a factor of 1 or more";
      },
      "FACTOR");
}

// What outputs are checked against, how each config is timed, what the
// caches may do, where benchmarks run and what is printed.
std::vector<TuneFlag> run_flags() {
  return {
      option(
          "--reference", nullptr, [](auto& c) -> auto& { return c.request.reference; },
          "Check outputs against: auto (host code when cheap, else the default "
          "config), host or default",
          [](CLI::Option& o) {
            o.check(CLI::IsMember({"auto", "host", "default"}));
          }),
      off_flag(
          "--no-check", "check", [](auto& c) -> auto& { return c.options.check.enabled; },
          "Do not check outputs against a reference"),
      flag(
          "--retune,--force", "retune", [](auto& c) -> auto& { return c.options.cache.retune; },
          "Tune even when the tuning cache has a result (and replace it)"),
      flag(
          "--cold-l2", "cold_l2", [](auto& c) -> auto& { return c.options.measure.cold_l2; },
          "Start every timed repetition with cold caches: the GPU's L2 flushed, on the "
          "CPU the kernel's arguments evicted (docs/autotuning.md)"),
      flag(
          "--graphs", "graphs", [](auto& c) -> auto& { return c.options.measure.graphs; },
          "Time a replayed captured graph of the launch (strips launch overhead)"),
      option(
          "--delay-us", "delay_us", [](auto& c) -> auto& { return c.options.measure.delay_us; },
          "Occupy the stream this long before each timed launch, so host launch "
          "overhead stays out of the timing",
          [](CLI::Option& o) { o.check(number_in(0, kMaxDelayMicroseconds)); }),
      option(
          "--early-stop", "early_stop",
          [](auto& c) -> auto& { return c.options.measure.early_stop; },
          "Stop timing a config once its fastest is this many times the best median so far "
          "(after 3 repetitions; after 1 at this factor cubed, 2 at it squared), or after 3 "
          "when it cannot win or finalists will time it again (default 1.5; 0: time every "
          "config in full)",
          [](CLI::Option& o) { o.check(number_in(0, 1000))->check(early_stop_factor()); }),
      choice<Isolation>(
          "--isolation", "isolation", [](auto& c) -> auto& { return c.request.isolation; },
          {{"process", Isolation::kProcess},
           {"thread", Isolation::kThread},
           {"auto", Isolation::kAuto}},
          "Benchmark worker: auto (default: process, else thread with a warning, unless "
          "KILN_WORKER names the worker), process (a crashing or hanging config costs only "
          "its worker; an error if the worker is missing or broken) or thread (in kiln's "
          "own process)"),
      option(
          "--trace", nullptr, [](auto& c) -> auto& { return c.options.pipeline.trace_path; },
          "Write a Chrome/Perfetto trace of the run to FILE"),
      flag(
          "--json", nullptr, [](auto& c) -> auto& { return c.json; },
          "Print one JSON document (and nothing else) on stdout"),
      option(
          "--distributed", nullptr, [](auto& c) -> auto& { return c.distributed; },
          "Under mpirun: tune with every rank (independent, broadcast, parallel, merge)"),
  };
}

// Every flag, in the order `kiln tune --help` lists them.
const std::vector<TuneFlag>& tune_flags() {
  static const std::vector<TuneFlag> flags = [] {
    std::vector<TuneFlag> all = request_flags();
    for (auto part : {search_flags(), run_flags(), measure_flags()})
      all.insert(all.end(), part.begin(), part.end());
    return all;
  }();
  return flags;
}

}  // namespace

TuneCall::TuneCall() {
  options.search.strategy = kAutoSearch;
  request.isolation = Isolation::kAuto;
  // NOTES: the environment's overrides are the flags' defaults: a flag on
  // the command line wins over KILN_SEARCH, KILN_EFFORT and KILN_BUDGET_S,
  // and the tuner does not apply them again.
  options = with_tuning_env(options, Options::global());
  options.environment = false;
}

void add_tune_flags(CLI::App& cmd, TuneCall& call) {
  for (const TuneFlag& f : tune_flags()) f.add(cmd, call, f);
  // trigger_on_parse clears --search at each occurrence, so CLI11's
  // at-most-once check, which every other option has, never fires: a second
  // --search silently replaced the first. Each is kept here and counted
  // when the command runs.
  cmd.get_option("--search")->each([&call](const std::string& name) {
    call.searches_given.push_back(name);
  });
  cmd.preparse_callback([&call](std::size_t) { call.searches_given.clear(); });
}

nlohmann::json tune_settings_json(const TuneCall& call) {
  nlohmann::json settings = nlohmann::json::object();
  for (const TuneFlag& f : tune_flags())
    if (f.setting) settings[f.setting] = f.value(call);
  return settings;
}

}  // namespace kiln::tool
