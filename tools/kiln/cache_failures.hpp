// The configs remembered as failed (kiln/cache/failed_configs.hpp), as the
// `kiln` commands show them: one JSON form for `kiln tune`'s skipped list
// and `kiln cache ls`, the listing's lines, and `kiln cache forget`.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace CLI {
class App;
}

#include "cache_output.hpp"
#include "kiln/cache/failed_configs.hpp"

namespace kiln::tool {

// One remembered failure, with its age at `now` (Unix seconds).
nlohmann::json failed_config_json(const FailedConfig& f, std::int64_t now);

// Every failure file beside the tuning records: a JSON list, and lines
// appended to `text`.
nlohmann::json failures_listing(const FailedConfigs& failures, std::int64_t now, std::string* text);

// How many configs `files` remember.
std::size_t failed_config_count(const std::vector<FailureFile>& files);

// `kiln cache forget --failures [--kernel NAME]`: the remembered failures
// go, the tuning records and artifacts stay.
void run_forget(const CacheOutput& c, const std::string& kernel);

// Its options on `forget` (a subcommand with --json bound to `ctx`).
void add_cache_forget_command(CLI::App& forget, std::shared_ptr<CacheOutput> ctx);

}  // namespace kiln::tool
