// The configs remembered as failed (kiln/cache/failed_configs.hpp), as the
// `kiln` commands show them: one JSON form for `kiln tune`'s skipped list
// and `kiln cache ls`, and the listing's lines (`kiln cache forget` is
// cmd_cache_forget.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kiln/cache/failed_configs.hpp"

namespace kiln::tool {

// One remembered failure, with its age at `now` (Unix seconds).
nlohmann::json failed_config_json(const FailedConfig& f, std::int64_t now);

// Every failure file beside the tuning records: a JSON list, and lines
// appended to `text`.
nlohmann::json failures_listing(const FailedConfigs& failures, std::int64_t now, std::string* text);

// How many configs `files` remember.
std::size_t failed_config_count(const std::vector<FailureFile>& files);

}  // namespace kiln::tool
