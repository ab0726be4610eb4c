// One tuning file on disk: a header and the records, as JSON.
//
//   { "format": "kiln-tuning", "format_version": 3,
//     "kiln_version": "0.1.0", "device_name": "...", "compute_capability": "9.0",
//     "created": "2026-11-21T05:30:00Z", "updated": "...",
//     "records": [ TuningRecord::to_json(), ... sorted by id ] }
//
// tests/cache/golden/tuning_v3.json pins this layout; any change bumps
// kTuningFormatVersion (include/kiln/cache/tuning_cache.hpp). tuning_v1.json and
// tuning_v2.json are kept to test that an older file is refused, never served.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kiln/cache/checked_read.hpp"
#include "kiln/cache/tuning_record.hpp"
#include "kiln/core/error.hpp"

namespace kiln::cache {

struct TuningFile {
  nlohmann::json header = nlohmann::json::object();  // every top-level field but "records"
  std::map<Hash128, TuningRecord> records;           // by TuningRecord::id()
  std::vector<std::string> problems;  // records skipped as malformed, each naming why
};

// The detail a kCorrupt error carries when the file is of a newer format
// version (its value): a newer Kiln's records, which a save must not
// replace.
inline constexpr std::string_view kNewerFormatDetail = "newer_format_version";

// Parses file text. kCorrupt for text that is not a tuning file of this
// format version (the reason names which); a malformed record is skipped
// and listed in `problems`, never fatal to its neighbours.
Result<TuningFile> parse_tuning_file(std::string_view text, const std::filesystem::path& path);

// What every tuning file reader takes in: a regular file of at most 64 MiB.
inline constexpr ReadRule kTuningRule{"a tuning table", kMaxTuningFileBytes, PathOwner::kCache};

// Reads and parses `path` in the cache: kNotFound when absent; refuses
// (kInvalidArgument) a symbolic link, anything but a regular file (a FIFO,
// a device: never opened for blocking), a file over kMaxTuningFileBytes,
// one owned by another user or writable by group or others.
Result<TuningFile> load_tuning_file(const std::filesystem::path& path);

// Reads and parses a table the user named (kiln cache import FILE): links
// are followed, the type and size checks are the same.
Result<TuningFile> load_user_table(const std::filesystem::path& path);

// kUnavailable when `text` is too large for any reader to take back in, so
// a writer never produces a file that would then be refused.
[[nodiscard]] Status check_tuning_file_size(const std::string& text,
                                            const std::filesystem::path& path);

// The file text: header fields (format and version always set from this
// build, "updated" set to now) and records sorted by id.
std::string serialize_tuning_file(const TuningFile& file);

// Puts `record` into `into`. On an id already present the faster record
// wins (ties: the smaller config text), so merges from many processes give
// the same result in any order.
void merge_record(std::map<Hash128, TuningRecord>& into, const TuningRecord& record);

}  // namespace kiln::cache
