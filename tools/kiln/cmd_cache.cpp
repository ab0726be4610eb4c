// kiln cache path|ls|stats|verify|prune|clear|export|forget|import|remote
// [--json]: look after the artifact cache and the tuning cache of
// Options::global() (KILN_CACHE_DIR and friends). One file per subcommand
// (cmd_cache_<name>.cpp); what they share, and the exit codes, in
// cache_common.hpp.
#include "cache_common.hpp"
#include "commands.hpp"

namespace kiln::tool {

void add_cache_command(CLI::App& app, int& exit_code) {
  CLI::App* cache =
      app.add_subcommand("cache", "Inspect and maintain the artifact and tuning caches");
  cache->require_subcommand(1);
  auto out = std::make_shared<CacheOutput>();
  out->exit_code = &exit_code;
  add_cache_path_command(*cache, out);
  add_cache_ls_command(*cache, out);
  add_cache_stats_command(*cache, out);
  add_cache_verify_command(*cache, out);
  add_cache_prune_command(*cache, out);
  add_cache_clear_command(*cache, out);
  add_cache_export_command(*cache, out);
  add_cache_forget_command(*cache, out);
  add_cache_import_command(*cache, out);
  add_cache_remote_command(*cache, exit_code);
}

}  // namespace kiln::tool
