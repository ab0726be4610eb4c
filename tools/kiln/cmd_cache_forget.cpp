// kiln cache forget --failures [--kernel NAME]: the remembered failures go,
// the tuning records and artifacts stay (cache_common.hpp has what the
// subcommands share).
#include <algorithm>
#include <set>

#include "cache_common.hpp"
#include "kiln/cache/failed_configs.hpp"
#include "kiln/cache/tuning_cache.hpp"
#include "kiln/core/options.hpp"

namespace kiln::tool {

namespace {

void run_forget(const CacheOutput& c, const std::string& kernel) {
  TuningCache tuning(Options::global());
  FailedConfigs failures = FailedConfigs::beside(tuning);
  if (!failures.enabled())
    return c.fail("no remembered failures to forget: the tuning cache is " +
                  std::string(cache_state_name(tuning.state())) +
                  (tuning.state_reason().empty() ? "" : " (" + tuning.state_reason() + ")"));
  const std::vector<FailureFile> before = failures.list();
  if (!kernel.empty() && std::none_of(before.begin(), before.end(),
                                      [&](const FailureFile& f) { return f.kernel == kernel; })) {
    std::set<std::string> names;
    for (const auto& f : before)
      if (!f.kernel.empty()) names.insert(f.kernel);
    std::string known;
    for (const auto& n : names) known += (known.empty() ? "" : ", ") + n;
    return c.fail("no failures remembered for kernel '" + kernel + "'" +
                  (known.empty() ? " (none are remembered)" : " (remembered: " + known + ")"));
  }
  auto forgotten = failures.forget(kernel);
  if (!forgotten) return c.fail(forgotten.error().describe());
  c.emit({{"forgotten_configs", *forgotten}, {"kernel", kernel}},
         "forgot " + std::to_string(*forgotten) + " failed config(s)" +
             (kernel.empty() ? "" : " of " + kernel) +
             ": the next tuning measures them again; tuning records and artifacts are kept\n");
}

}  // namespace

void add_cache_forget_command(CLI::App& cache, const CacheOut& out) {
  CLI::App& forget = *add_cache_subcommand(
      cache, *out, "forget", "Forget remembered failures (--failures), keeping good records");
  auto forget_failures = std::make_shared<bool>(false);
  auto forget_kernel = std::make_shared<std::string>();
  // What to forget is named, so that `forget` alone never reads as "all".
  forget
      .add_flag("--failures", *forget_failures,
                "The configs remembered as failed: measured again by the next tuning")
      ->required();
  forget.add_option("--kernel", *forget_kernel, "Only this kernel's (its template name)")
      ->check(CLI::Validator(
          [](std::string& name) -> std::string {
            return name.empty() ? "the kernel name is empty: give one, or leave --kernel out" : "";
          },
          "NAME"));
  // The flag's variable lives as long as the command: CLI11 writes it when
  // parsing, after this function has returned (ASan caught it freed).
  forget.callback([out, forget_failures, forget_kernel] {
    if (*forget_failures) run_forget(*out, *forget_kernel);
  });
}

}  // namespace kiln::tool
