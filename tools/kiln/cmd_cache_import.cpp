// kiln cache import: the tuning records of FILE merged into the cache.
// (cache_common.hpp has what the subcommands share).
#include "cache_common.hpp"

#include "kiln/cache/tuning_cache.hpp"
#include "kiln/core/options.hpp"

namespace kiln::tool {

namespace {

void run_import(const CacheOutput& c, const std::string& file) {
  TuningCache tuning(Options::global());
  Result<std::size_t> n = tuning.import_table(file);
  if (!n) return c.fail(n.error().describe());
  // Each record skipped is named with why (a checksum that does not match,
  // a missing field), and exits 1: a table that lost records on the way
  // is not a clean import.
  std::vector<std::string> skipped;
  for (const auto& f : tuning.files()) {
    if (f.path == file) skipped = f.skipped;
  }
  c.emit_with_problems(
      {{"imported_records", *n},
       {"skipped_records", skipped.size()},
       {"into", tuning.write_path().string()}},
      "imported " + std::to_string(*n) + " tuning records into " + tuning.write_path().string() +
          (skipped.empty()
               ? std::string()
               : " (" + std::to_string(skipped.size()) + " malformed records skipped)") +
          "\n",
      skipped);
}

}  // namespace

void add_cache_import_command(CLI::App& cache, const CacheOut& out) {
  auto file = std::make_shared<std::string>();
  CLI::App* imp = add_cache_subcommand(cache, *out, "import",
                                       "Merge the tuning records of FILE into the cache");
  imp->add_option("FILE", *file, "Tuning JSON file (from kiln cache export)")->required();
  imp->callback([out, file] { run_import(*out, *file); });
}

}  // namespace kiln::tool
