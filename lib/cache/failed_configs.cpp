#include "kiln/cache/failed_configs.hpp"

#include <map>
#include <nlohmann/json.hpp>

#include "checked_read.hpp"
#include "dir_safety.hpp"
#include "file_io.hpp"
#include "json_guard.hpp"
#include "kiln/cache/tuning_cache.hpp"
#include "kiln/core/keys.hpp"
#include "kiln/core/log.hpp"

namespace kiln {

namespace {

// A failure file lists configs of one problem: a few KiB, never near this.
constexpr std::uint64_t kMaxFailureFileBytes = 16ull << 20;

// The configs in `path`, by Config::key(); an unreadable file is an
// error value (the caller logs it and measures the configs again).
Result<std::map<std::string, FailedConfig>> read_failures(const std::filesystem::path& path) {
  auto text = cache::read_checked_file(path, {"a failed-configs file", kMaxFailureFileBytes});
  if (!text.ok()) return text.error();
  auto bad = [&](const std::string& why) {
    return make_error(ErrorCode::kCorrupt,
                      "failed-configs file " + path.string() + " not used: " + why +
                          " (remove it: its configs are then measured again)",
                      {{"path", path.string()}});
  };
  if (cache::json_nesting_depth(*text) > cache::kMaxJsonDepth) return bad("nested too deep");
  nlohmann::json json = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_object()) return bad("not a JSON object");
  if (!cache::field_equals(json, "format", kFailedConfigsFormat) ||
      !cache::field_equals(json, "format_version", kFailedConfigsFormatVersion)) {
    return bad("not format " + std::string(kFailedConfigsFormat) + " version " +
               std::to_string(kFailedConfigsFormatVersion));
  }
  std::map<std::string, FailedConfig> out;
  try {
    for (const auto& f : json.at("failed")) {
      FailedConfig c{Config::from_json(f.at("config")), f.at("outcome").get<std::string>(),
                     f.value("reason", std::string())};
      out[c.config.key()] = std::move(c);
    }
  } catch (const std::exception& e) {
    return bad(std::string("malformed entry: ") + e.what());
  }
  return out;
}

nlohmann::json failures_json(const FailureKey& key,
                             const std::map<std::string, FailedConfig>& failed) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& [text, f] : failed) {
    list.push_back({{"config", f.config.to_json()}, {"outcome", f.outcome}, {"reason", f.reason}});
  }
  // The identity is there for a person reading the file; the file name is
  // the key that is looked up.
  return {{"format", kFailedConfigsFormat},
          {"format_version", kFailedConfigsFormatVersion},
          {"problem", key.problem.canonical()},
          {"device", key.identity.device.to_json()},
          {"threads", key.threads},
          {"updated", utc_timestamp()},
          {"failed", std::move(list)}};
}

}  // namespace

Hash128 FailureKey::id() const {
  return Hasher()
      .field(tuning_key(problem, identity.device.arch, identity.toolchain, identity.env,
                        identity.definition))
      .field(identity.device.name)
      .field(std::int64_t{threads})
      .finish();
}

FailedConfigs::FailedConfigs(std::filesystem::path dir, bool read_only)
    : dir_(std::move(dir)), read_only_(read_only) {}

FailedConfigs FailedConfigs::beside(const TuningCache& cache) {
  if (cache.dir().empty()) return {};
  switch (cache.state()) {
    case CacheState::kReady:
      return FailedConfigs(cache.dir() / "failed", false);
    case CacheState::kReadOnly:
      return FailedConfigs(cache.dir() / "failed", true);
    default:
      return {};
  }
}

std::filesystem::path FailedConfigs::file_for(const FailureKey& key) const {
  return dir_ / (key.id().hex() + ".json");
}

std::vector<FailedConfig> FailedConfigs::recall(const FailureKey& key) const {
  if (!enabled()) return {};
  const auto path = file_for(key);
  auto read = read_failures(path);
  if (!read.ok()) {
    if (read.error().code != ErrorCode::kNotFound)
      log_once(LogLevel::kWarn, "failed-configs:" + path.string(), read.error().message);
    return {};
  }
  std::vector<FailedConfig> out;
  for (auto& [text, f] : *read) out.push_back(std::move(f));
  return out;
}

Status FailedConfigs::remember(const FailureKey& key, const std::vector<FailedConfig>& failed) {
  if (!enabled() || read_only_ || failed.empty()) return ok_status();
  Status made = cache::ensure_private_dir(dir_);
  if (!made.ok()) return made;
  const auto path = file_for(key);
  // NOTES: merged under the lock, so two tuners of one problem that finish
  // together both add their failures; readers take no lock (atomic_write).
  auto lock = cache::FileLock::acquire(dir_ / ".lock");
  if (!lock.ok()) return lock.error();
  std::map<std::string, FailedConfig> all;
  if (auto old = read_failures(path); old.ok()) all = std::move(*old);
  for (const auto& f : failed) all[f.config.key()] = f;
  return cache::atomic_write(path, failures_json(key, all).dump(1));
}

}  // namespace kiln
