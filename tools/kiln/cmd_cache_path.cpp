// kiln cache path: where the caches live.
// (cache_common.hpp has what the subcommands share).
#include "cache_common.hpp"

#include "kiln/cache/artifact_cache.hpp"
#include "kiln/cache/tuning_cache.hpp"
#include "kiln/core/options.hpp"

namespace kiln::tool {

namespace {

void run_path(const CacheOutput& c) {
  OpenCaches caches;
  auto& [artifacts, tuning] = caches;
  const Options& o = Options::global();
  nlohmann::json j = {{"cache_dir", o.cache_dir.string()},
                      {"source", o.cache_dir_source},
                      {"artifacts", artifacts.dir().string()},
                      {"tuning", tuning.dir().string()},
                      {"tuning_write_file", tuning.write_path().string()}};
  c.emit(j, o.cache_dir.string() + "\n");
}

}  // namespace

void add_cache_path_command(CLI::App& cache, const CacheOut& out) {
  add_cache_subcommand(cache, *out, "path", "Print the cache directory")->callback([out] {
    run_path(*out);
  });
}

}  // namespace kiln::tool
