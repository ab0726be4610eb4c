#include "tuning_file.hpp"

#include "dir_safety.hpp"
#include "json_guard.hpp"
#include "kiln/cache/checked_read.hpp"
#include "kiln/cache/tuning_cache.hpp"

namespace kiln::cache {

namespace {

ErrorInfo corrupt(const std::filesystem::path& path, const std::string& why) {
  return make_error(ErrorCode::kCorrupt, "tuning file " + path.string() + " not used: " + why,
                    {{"path", path.string()}});
}

}  // namespace

Result<TuningFile> parse_tuning_file(std::string_view text, const std::filesystem::path& path) {
  if (json_nesting_depth(text) > kMaxJsonDepth) {
    return corrupt(path, "nested deeper than " + std::to_string(kMaxJsonDepth) +
                             " levels (no Kiln tuning file is)");
  }
  nlohmann::json json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) return corrupt(path, "not valid JSON (truncated or edited?)");
  if (!field_equals(json, "format", kTuningFormat)) {
    return corrupt(path, "not a Kiln tuning file (no \"format\": \"kiln-tuning\")");
  }
  const nlohmann::json& version = json["format_version"];
  const std::string reads = ", this Kiln reads " + std::to_string(kTuningFormatVersion);
  if (!version.is_number_integer()) {
    return corrupt(path, "format version " + version.dump() + " is not a number" + reads);
  }
  if (version.get<std::int64_t>() < kTuningFormatVersion) {
    // Its records were keyed without what this version checks (1: the
    // kernel's definition and a checksum over the result; 2: the toolchain
    // of the one backend they are for): serving them could serve a winner
    // measured for another kernel or compiler.
    return corrupt(path, "older format (format version " + version.dump() + reads +
                             "): its records are keyed differently (version 1 lacks the "
                             "kernel's definition hash and checksum, version 2 keys by every "
                             "backend's compiler), so none is served and those kernels are "
                             "tuned again");
  }
  if (version.get<std::int64_t>() != kTuningFormatVersion) {
    ErrorInfo newer = corrupt(path, "newer format (format version " + version.dump() + reads +
                                        "): written by a newer Kiln");
    newer.details[std::string(kNewerFormatDetail)] = version.dump();
    return newer;
  }
  if (!json.contains("records") || !json["records"].is_array()) {
    return corrupt(path, "no \"records\" array");
  }
  TuningFile file;
  for (const auto& [name, value] : json.items()) {
    if (name != "records") file.header[name] = value;
  }
  for (const auto& entry : json["records"]) {
    try {
      merge_record(file.records, TuningRecord::from_json(entry));
    } catch (const Error& e) {
      file.problems.push_back(path.string() + ": record skipped: " + e.what());
    }
  }
  return file;
}

Result<TuningFile> load_tuning_file(const std::filesystem::path& path) {
  Result<CheckedFile> file = CheckedFile::open(path, kTuningRule);
  if (!file) return file.error();
  if (Status refused = check_entry_stat(file->stat(), path); !refused.ok()) return refused.error();
  Result<std::string> text = file->read_all();
  if (!text) return text.error();
  return parse_tuning_file(*text, path);
}

Result<TuningFile> load_user_table(const std::filesystem::path& path) {
  Result<std::string> text =
      read_checked_file(path, ReadRule{kTuningRule.what, kTuningRule.max_bytes, PathOwner::kUser});
  if (!text) return text.error();
  return parse_tuning_file(*text, path);
}

Status check_tuning_file_size(const std::string& text, const std::filesystem::path& path) {
  if (text.size() <= kTuningRule.max_bytes) return ok_status();
  return make_error(ErrorCode::kUnavailable,
                    "not writing " + path.string() + ": it would be " +
                        byte_count_text(text.size()) + ", larger than the " +
                        byte_count_text(kTuningRule.max_bytes) + " limit for " + kTuningRule.what +
                        " (no reader would take it in); clear old records: kiln cache clear",
                    {{"path", path.string()}});
}

std::string serialize_tuning_file(const TuningFile& file) {
  nlohmann::json json = file.header;
  json["format"] = kTuningFormat;
  json["format_version"] = kTuningFormatVersion;
  json["kiln_version"] = kiln_version();
  if (!json.contains("created")) json["created"] = utc_timestamp();
  json["updated"] = utc_timestamp();
  nlohmann::json records = nlohmann::json::array();
  for (const auto& [id, record] : file.records) records.push_back(record.to_json());
  json["records"] = std::move(records);
  return json.dump(1) + "\n";
}

void merge_record(std::map<Hash128, TuningRecord>& into, const TuningRecord& record) {
  Hash128 id = record.id();
  auto it = into.find(id);
  if (it == into.end()) {
    into.emplace(id, record);
    return;
  }
  const TuningRecord& held = it->second;
  bool better =
      record.best_time_ms < held.best_time_ms ||
      (record.best_time_ms == held.best_time_ms && record.best.to_string() < held.best.to_string());
  if (better) it->second = record;
}

}  // namespace kiln::cache
