// kiln cache prune: least recently used artifacts evicted down to a size.
// (cache_common.hpp has what the subcommands share).
#include "cache_common.hpp"

#include "kiln/cache/artifact_cache.hpp"
#include "kiln/core/options.hpp"
#include "option_checks.hpp"

namespace kiln::tool {

namespace {

void run_prune(const CacheOutput& c, const std::string& max_size) {
  auto bound = parse_size(max_size);
  if (!bound)
    return c.fail("--max-size '" + max_size + "' is not a size: use 512M, 4G or a byte count");
  ArtifactCache artifacts(Options::global());
  if (artifacts.state() != CacheState::kReady) {
    return c.fail(std::string("cannot prune a ") + cache_state_name(artifacts.state()) +
                  " cache: " + artifacts.state_reason());
  }
  SweepReport report = artifacts.prune(*bound);
  std::vector<std::string> problems;
  sweep_problems(report, problems);
  c.emit_with_problems(
      report.to_json(),
      "removed " + std::to_string(report.removed_entries) + " entries and " +
          std::to_string(report.removed_programs) + " programs (" +
          human_size(report.removed_bytes) + "); " + std::to_string(report.entries) + " entries (" +
          std::to_string(report.programs) + " programs), " + human_size(report.bytes) + " left\n",
      problems);
}

}  // namespace

void add_cache_prune_command(CLI::App& cache, const CacheOut& out) {
  auto max_size = std::make_shared<std::string>();
  CLI::App* prune = add_cache_subcommand(cache, *out, "prune",
                                         "Evict least recently used artifacts down to a size");
  prune->add_option("--max-size", *max_size, "Size to keep: 512M, 4G or bytes")
      ->required()
      ->check(size_text());
  prune->callback([out, max_size] { run_prune(*out, *max_size); });
}

}  // namespace kiln::tool
