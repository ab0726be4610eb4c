// What the `kiln cache` subcommands share. Each subcommand is one file,
// cmd_cache_<name>.cpp, with one add_cache_<name>_command listed in
// cmd_cache.cpp; all answer through one CacheOutput (text or --json, the
// exit code). Exit codes: 0 done, 1 a failure or (verify) broken entries
// found, 2 usage. A failure includes what was not done (files a clear or
// prune could not remove, a cache directory the tuner refuses): never a
// success line over nothing done.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cache_output.hpp"
#include "kiln/cache/artifact_cache.hpp"
#include "kiln/cache/tuning_cache.hpp"
#include "kiln/core/options.hpp"

namespace kiln::tool {

// Shared by every subcommand: the --json switch, the exit code.
using CacheOut = std::shared_ptr<CacheOutput>;

// Both caches of Options::global(), opened as the tuner opens them.
struct OpenCaches {
  ArtifactCache artifacts{Options::global()};
  TuningCache tuning{Options::global()};
};

// Subcommand `name` of `cache`, with the --json flag every one has.
CLI::App* add_cache_subcommand(CLI::App& cache, CacheOutput& out, const char* name,
                               const char* help);

// "512 B", "1.5 MiB".
std::string human_size(std::uint64_t bytes);

// The caches whose directory failed the safety checks the tuner applies
// (dir_safety: group- or other-writable, a foreign owner): the tuner uses
// neither, so a listing or a verification that shows them empty or healthy
// would lie. One line per distinct reason.
std::vector<std::string> refusals(const ArtifactCache& artifacts, const TuningCache& tuning);

// What a sweep could not do, as lines for emit_with_problems.
void sweep_problems(const SweepReport& report, std::vector<std::string>& problems);

// ls and verify only read: opening the caches would create a missing
// directory (a mistyped KILN_CACHE_DIR, made real by looking at it). When
// there is none, says so (with `j`'s empty listing) and returns true;
// nothing there is nothing broken.
bool no_cache_at(const CacheOutput& c, nlohmann::json j);

// The subcommands, in `kiln cache --help`'s order.
void add_cache_path_command(CLI::App& cache, const CacheOut& out);
void add_cache_ls_command(CLI::App& cache, const CacheOut& out);
void add_cache_stats_command(CLI::App& cache, const CacheOut& out);
void add_cache_verify_command(CLI::App& cache, const CacheOut& out);
void add_cache_prune_command(CLI::App& cache, const CacheOut& out);
void add_cache_clear_command(CLI::App& cache, const CacheOut& out);
void add_cache_export_command(CLI::App& cache, const CacheOut& out);
void add_cache_forget_command(CLI::App& cache, const CacheOut& out);
void add_cache_import_command(CLI::App& cache, const CacheOut& out);

}  // namespace kiln::tool
