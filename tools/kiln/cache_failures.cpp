#include "cache_failures.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <memory>
#include <set>

#include "duration_text.hpp"
#include "kiln/cache/tuning_cache.hpp"
#include "kiln/core/options.hpp"

namespace kiln::tool {

nlohmann::json failed_config_json(const FailedConfig& f, std::int64_t now) {
  return {{"config", f.config.to_json()},
          {"outcome", f.outcome},
          {"reason", f.reason},
          {"failed_at", f.failed_at},
          {"age_s", std::max<std::int64_t>(0, now - f.failed_at)},
          {"skipped_runs", f.skipped_runs},
          {"missing_headers", f.missing_headers}};
}

nlohmann::json failures_listing(const FailedConfigs& failures, std::int64_t now,
                                std::string* text) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& f : failures.list()) {
    nlohmann::json configs = nlohmann::json::array();
    if (!f.problem_text.empty()) {
      *text += "  BROKEN: " + f.problem_text + "\n";
      out.push_back({{"path", f.path.string()}, {"problem", f.problem_text}});
      continue;
    }
    *text += "  " + f.problem + "  on " + f.device + "\n";
    for (const auto& c : f.failed) {
      configs.push_back(failed_config_json(c, now));
      *text += "    " + c.config.to_string() + "  " + c.outcome + "  " +
               age_text(now - c.failed_at) + " ago, skipped by " + std::to_string(c.skipped_runs) +
               " run(s)\n";
    }
    out.push_back({{"path", f.path.string()},
                   {"kernel", f.kernel},
                   {"problem", f.problem},
                   {"device", f.device},
                   {"failed", std::move(configs)}});
  }
  return out;
}

std::size_t failed_config_count(const std::vector<FailureFile>& files) {
  std::size_t n = 0;
  for (const auto& f : files) n += f.failed.size();
  return n;
}

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

void add_cache_forget_command(CLI::App& forget, std::shared_ptr<CacheOutput> ctx) {
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
  forget.callback([ctx, forget_failures, forget_kernel] {
    if (*forget_failures) run_forget(*ctx, *forget_kernel);
  });
}

}  // namespace kiln::tool
