#include "kiln/cache/failed_configs.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <map>
#include <nlohmann/json.hpp>

#include <set>
#include <tuple>
#include "beside_cache.hpp"

#include "dir_safety.hpp"
#include "json_guard.hpp"
#include "kiln/cache/checked_read.hpp"
#include "kiln/cache/file_io.hpp"
#include "kiln/cache/tuning_cache.hpp"
#include "kiln/core/keys.hpp"
#include "kiln/core/log.hpp"

namespace kiln {

namespace {

// A failure file lists configs of one problem: a few KiB, never near this.
constexpr std::uint64_t kMaxFailureFileBytes = 16ull << 20;

struct FailureTable {
  nlohmann::json header;                       // kernel, problem, device: for listings
  std::map<std::string, FailedConfig> failed;  // by Config::key()
};

FailedConfig failure_from_json(const nlohmann::json& f) {
  FailedConfig c{Config::from_json(f.at("config")), f.at("outcome").get<std::string>(),
                 f.value("reason", std::string())};
  c.failed_at = f.at("failed_at").get<std::int64_t>();
  c.skipped_runs = f.at("skipped_runs").get<int>();
  c.missing_headers = f.at("missing_headers").get<std::vector<std::string>>();
  c.search_dirs = f.at("search_dirs").get<std::vector<std::string>>();
  for (const auto& w : f.at("files"))
    c.files.push_back({w.at("path").get<std::string>(), w.at("digest").get<std::string>()});
  return c;
}

nlohmann::json failure_to_json(const FailedConfig& f) {
  nlohmann::json files = nlohmann::json::array();
  for (const auto& w : f.files) files.push_back({{"path", w.path}, {"digest", w.digest}});
  return {{"config", f.config.to_json()},
          {"outcome", f.outcome},
          {"reason", f.reason},
          {"failed_at", f.failed_at},
          {"skipped_runs", f.skipped_runs},
          {"missing_headers", f.missing_headers},
          {"search_dirs", f.search_dirs},
          {"files", std::move(files)}};
}

// The configs in `path`, by Config::key(); an unreadable file is an
// error value (the caller logs it and measures the configs again).
Result<FailureTable> read_failures(const std::filesystem::path& path) {
  auto text = cache::read_checked_file(path, {"a failed-configs file", kMaxFailureFileBytes});
  if (!text.ok()) return text.error();
  auto bad = [&](const std::string& why) {
    return make_error(ErrorCode::kCorrupt,
                      "failed-configs file " + path.string() + " not used: " + why +
                          " (remove it, or run `kiln cache forget --failures`: its configs are "
                          "then measured again)",
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
  FailureTable out;
  try {
    out.header = {{"kernel", json.at("kernel").get<std::string>()},
                  {"problem", json.at("problem").get<std::string>()},
                  {"device", json.at("device").at("name").get<std::string>()}};
    for (const auto& f : json.at("failed")) {
      FailedConfig c = failure_from_json(f);
      out.failed[c.config.key()] = std::move(c);
    }
  } catch (const std::exception& e) {
    return bad(std::string("malformed entry: ") + e.what());
  }
  return out;
}

nlohmann::json failures_json(const FailureKey& key,
                             const std::map<std::string, FailedConfig>& failed) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& [text, f] : failed) list.push_back(failure_to_json(f));
  // The identity is there for a person reading the file and for listings;
  // the file name is the key that is looked up.
  return {{"format", kFailedConfigsFormat},
          {"format_version", kFailedConfigsFormatVersion},
          {"kernel", key.problem.kernel()},
          {"problem", key.problem.canonical()},
          {"device", key.identity.device.to_json()},
          {"threads", key.threads},
          {"updated", utc_timestamp()},
          {"failed", std::move(list)}};
}

bool is_failure_file(const std::filesystem::path& p) {
  // Temporary files of atomic_write start with a dot.
  return p.extension() == ".json" && !p.filename().string().starts_with(".");
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
  const std::optional<internal::BesideCache> at = internal::beside_cache(cache, "failed");
  return at ? FailedConfigs(at->dir, at->read_only) : FailedConfigs();
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
  for (auto& [text, f] : read->failed) out.push_back(std::move(f));
  return out;
}

Status FailedConfigs::update(const FailureKey& key, const FailureUpdate& changes) {
  if (!enabled() || read_only_) return ok_status();
  const bool nothing = changes.failed.empty() && changes.measured.empty() &&
                       changes.skipped.empty() && changes.forgotten.empty();
  if (nothing && !changes.replace) return ok_status();
  const auto path = file_for(key);
  std::error_code ec;
  // Nothing to forget in a file that is not there: no directory is made
  // for a run that failed nothing.
  if (changes.failed.empty() && !std::filesystem::exists(path, ec)) return ok_status();
  Status made = cache::ensure_private_dir(dir_);
  if (!made.ok()) return made;
  // NOTES: merged under the lock, so two tuners of one problem that finish
  // together both add their failures; readers take no lock (atomic_write).
  auto lock = cache::FileLock::acquire(dir_ / ".lock");
  if (!lock.ok()) return lock.error();
  std::map<std::string, FailedConfig> all;
  if (!changes.replace) {
    if (auto old = read_failures(path); old.ok()) all = std::move(old->failed);
  }
  for (const auto& c : changes.forgotten) all.erase(c.key());
  for (const auto& c : changes.measured) all.erase(c.key());
  for (const auto& c : changes.skipped) {
    if (auto it = all.find(c.key()); it != all.end()) ++it->second.skipped_runs;
  }
  for (const auto& f : changes.failed) all[f.config.key()] = f;
  if (all.empty()) {
    // Every failure is forgotten: the file goes, rather than a file of none.
    if (::unlink(path.c_str()) != 0 && errno != ENOENT)
      return make_error(ErrorCode::kIo, cache::errno_text("remove", path));
    return ok_status();
  }
  return cache::atomic_write(path, failures_json(key, all).dump(1));
}

Status FailedConfigs::remember(const FailureKey& key, const std::vector<FailedConfig>& failed) {
  FailureUpdate changes;
  changes.failed = failed;
  return update(key, changes);
}

std::vector<FailureFile> FailedConfigs::list() const {
  std::vector<FailureFile> out;
  if (!enabled()) return out;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(dir_, ec), end; !ec && it != end; it.increment(ec)) {
    if (!is_failure_file(it->path())) continue;
    FailureFile file;
    file.path = it->path();
    auto read = read_failures(it->path());
    if (!read.ok()) {
      file.problem_text = read.error().message;
    } else {
      file.kernel = read->header["kernel"];
      file.problem = read->header["problem"];
      file.device = read->header["device"];
      for (auto& [text, f] : read->failed) file.failed.push_back(std::move(f));
    }
    out.push_back(std::move(file));
  }
  std::sort(out.begin(), out.end(), [](const FailureFile& a, const FailureFile& b) {
    return std::tie(a.kernel, a.problem, a.path) < std::tie(b.kernel, b.problem, b.path);
  });
  return out;
}

Result<std::size_t> FailedConfigs::forget(const std::string& kernel) {
  if (!enabled()) return std::size_t{0};
  if (read_only_)
    return make_error(ErrorCode::kIo,
                      "the failures under " + dir_.string() +
                          " are read-only here (KILN_CACHE_READONLY or a read-only directory): "
                          "nothing forgotten");
  std::error_code ec;
  if (!std::filesystem::exists(dir_, ec)) return std::size_t{0};
  auto lock = cache::FileLock::acquire(dir_ / ".lock");
  if (!lock.ok()) return lock.error();
  std::size_t configs = 0;
  for (const auto& file : list()) {
    // An unreadable file of no known kernel goes with a forget of all.
    if (!kernel.empty() && file.kernel != kernel) continue;
    if (::unlink(file.path.c_str()) != 0 && errno != ENOENT)
      return make_error(ErrorCode::kIo, cache::errno_text("remove", file.path),
                        {{"forgotten", std::to_string(configs)}});
    configs += file.failed.size();
  }
  return configs;
}

}  // namespace kiln
