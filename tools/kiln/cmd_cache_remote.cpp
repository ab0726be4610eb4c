// kiln cache remote ping|stats|ls|verify|push|pull [--json]: the remote
// cache tier named by KILN_REMOTE_CACHE (docs/distributed.md). Exit codes:
// 0 done, 1 a failure (no tier, server unreachable, broken entries found by
// verify), 2 usage. The password is never printed: URLs are shown redacted.
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cache_output.hpp"
#include "commands.hpp"
#include "kiln/cache/artifact_cache.hpp"
#include "kiln/cache/remote_cache.hpp"
#include "kiln/cache/tuning_cache.hpp"
#include "kiln/core/options.hpp"

namespace kiln::tool {
namespace {

struct RemoteContext : CacheOutput {
  RemoteContext() { prefix = "kiln cache remote"; }
  // The tier, or nullptr after saying why there is none.
  RemoteCache* tier() const {
    if (!remote_cache_built()) {
      fail(
          "this Kiln was built without hiredis and OpenSSL; install libhiredis-dev and "
          "libssl-dev (scripts/setup.sh) and rebuild");
      return nullptr;
    }
    Result<std::optional<RemoteCacheConfig>> config = RemoteCacheConfig::from_env();
    if (!config) {
      fail(config.error().message);
      return nullptr;
    }
    if (!config->has_value()) {
      fail(
          "KILN_REMOTE_CACHE is not set; set it to redis://host:port or unix:///path "
          "(docs/distributed.md)");
      return nullptr;
    }
    return RemoteCache::global();
  }
};

const char* kind_name(RemoteKind kind) {
  return kind == RemoteKind::kArtifact ? "artifact" : "tuning-record";
}

nlohmann::json config_json(const RemoteCacheConfig& c) {
  const char* mode = c.mode == RemoteMode::kRead    ? "read"
                     : c.mode == RemoteMode::kWrite ? "write"
                                                    : "readwrite";
  return {{"url", c.redacted()},
          {"prefix", c.prefix},
          {"mode", mode},
          {"signed", !c.secret.empty()},
          {"loads_artifacts", c.loads_artifacts()},
          {"connect_timeout_ms", c.connect_timeout.count()},
          {"op_timeout_ms", c.op_timeout.count()}};
}

void run_ping(const RemoteContext& c) {
  RemoteCache* tier = c.tier();
  if (!tier) return;
  const auto start = std::chrono::steady_clock::now();
  Result<std::string> version = tier->ping();
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (!version) return c.fail(version.error().message);
  nlohmann::json j = config_json(tier->config());
  j["server_version"] = *version;
  j["round_trip_ms"] = ms;
  c.emit(j, tier->config().redacted() + ": server " + *version + ", answered in " +
                std::to_string(ms) + " ms\n");
}

void run_ls(const RemoteContext& c, bool verify) {
  RemoteCache* tier = c.tier();
  if (!tier) return;
  Result<std::vector<RemoteCache::Listed>> listed = tier->list(verify);
  if (!listed) return c.fail(listed.error().message);
  nlohmann::json entries = nlohmann::json::array();
  std::string text;
  std::size_t broken = 0;
  for (const auto& item : *listed) {
    nlohmann::json e = {
        {"kind", kind_name(item.kind)}, {"key", item.key.hex()}, {"bytes", item.bytes}};
    if (verify) e["problem"] = item.problem;
    entries.push_back(e);
    text += std::string(kind_name(item.kind)) + "  " + item.key.hex() + "  " +
            std::to_string(item.bytes) + " B" +
            (item.problem.empty() ? "" : "  BROKEN: " + item.problem) + "\n";
    if (!item.problem.empty()) ++broken;
  }
  nlohmann::json j = {{"entries", entries}, {"count", listed->size()}};
  if (verify) {
    j["broken"] = broken;
    text += std::to_string(listed->size()) + " entries, " + std::to_string(broken) + " broken\n";
  }
  c.emit(j, text);
  if (broken > 0) *c.exit_code = 1;
}

void run_stats(const RemoteContext& c) {
  RemoteCache* tier = c.tier();
  if (!tier) return;
  Result<std::vector<RemoteCache::Listed>> listed = tier->list(false);
  if (!listed) return c.fail(listed.error().message);
  std::uint64_t artifacts = 0, records = 0, bytes = 0;
  for (const auto& item : *listed) {
    (item.kind == RemoteKind::kArtifact ? artifacts : records)++;
    bytes += item.bytes;
  }
  nlohmann::json j = config_json(tier->config());
  j["artifacts"] = artifacts;
  j["tuning_records"] = records;
  j["bytes"] = bytes;
  j["state"] = tier->state();
  c.emit(j, tier->config().redacted() + " (prefix " + tier->config().prefix +
                "): " + std::to_string(artifacts) + " artifacts, " + std::to_string(records) +
                " tuning records, " + std::to_string(bytes) + " bytes\n");
}

// Every local artifact and tuning record, written to the server now.
void run_push(const RemoteContext& c) {
  RemoteCache* tier = c.tier();
  if (!tier) return;
  if (!tier->config().writes()) return c.fail("KILN_REMOTE_CACHE_MODE=read: push writes nothing");
  ArtifactCache artifacts(Options::global());
  TuningCache tuning(Options::global());
  std::size_t pushed_artifacts = 0, pushed_records = 0;
  for (const auto& info : artifacts.scan(false)) {
    if (info.is_program || info.temporary) continue;
    std::shared_ptr<const CachedArtifact> artifact = artifacts.lookup(info.key);
    if (!artifact) continue;
    Status written =
        tier->write_now(RemoteKind::kArtifact, info.key, RemoteCache::encode_artifact(*artifact));
    if (!written.ok()) return c.fail(written.error().message);
    ++pushed_artifacts;
  }
  for (const auto& record : tuning.records()) {
    Status written = tier->write_now(RemoteKind::kRecord, record.id(), record.to_json().dump());
    if (!written.ok()) return c.fail(written.error().message);
    ++pushed_records;
  }
  c.emit({{"artifacts", pushed_artifacts}, {"tuning_records", pushed_records}},
         "pushed " + std::to_string(pushed_artifacts) + " artifacts and " +
             std::to_string(pushed_records) + " tuning records to " + tier->config().redacted() +
             "\n");
}

// Every remote entry that passes its checks, written to the local caches.
void run_pull(const RemoteContext& c) {
  RemoteCache* tier = c.tier();
  if (!tier) return;
  Result<std::vector<RemoteCache::Listed>> listed = tier->list(false);
  if (!listed) return c.fail(listed.error().message);
  ArtifactCache artifacts(Options::global());
  TuningCache tuning(Options::global());
  std::size_t pulled_artifacts = 0, pulled_records = 0, refused = 0;
  for (const auto& item : *listed) {
    if (item.kind == RemoteKind::kArtifact) {
      // lookup goes memory -> disk -> remote and writes a remote hit to disk.
      if (artifacts.lookup(item.key))
        ++pulled_artifacts;
      else
        ++refused;
      continue;
    }
    Result<std::string> payload = tier->fetch(item.kind, item.key);
    if (!payload) {
      ++refused;
      continue;
    }
    try {
      TuningRecord record = TuningRecord::from_json(nlohmann::json::parse(*payload));
      if (record.id() != item.key) throw std::runtime_error("stored under another key");
      tuning.put(std::move(record));
      ++pulled_records;
    } catch (const std::exception&) {
      ++refused;
    }
  }
  if (Result<StoreOutcome> saved = tuning.save(); !saved) return c.fail(saved.error().message);
  c.emit(
      {{"artifacts", pulled_artifacts}, {"tuning_records", pulled_records}, {"refused", refused}},
      "pulled " + std::to_string(pulled_artifacts) + " artifacts and " +
          std::to_string(pulled_records) + " tuning records" +
          (refused ? " (" + std::to_string(refused) + " not loaded: see warnings)" : "") + "\n");
}

}  // namespace

void add_cache_remote_command(CLI::App& cache, int& exit_code) {
  auto* remote = cache.add_subcommand("remote", "The remote cache tier (KILN_REMOTE_CACHE)");
  remote->require_subcommand(1);
  auto ctx = std::make_shared<RemoteContext>();
  ctx->exit_code = &exit_code;
  auto sub = [&](const char* name, const char* help) {
    auto* s = remote->add_subcommand(name, help);
    s->add_flag("--json", ctx->json, "Print one JSON object");
    return s;
  };
  sub("ping", "Check the server answers; print its version and round trip")->callback([ctx] {
    run_ping(*ctx);
  });
  sub("stats", "Entries and bytes under the prefix")->callback([ctx] { run_stats(*ctx); });
  sub("ls", "List the entries under the prefix")->callback([ctx] { run_ls(*ctx, false); });
  sub("verify", "Check every entry (checksum, key, signature); exit 1 when any is broken")
      ->callback([ctx] { run_ls(*ctx, true); });
  sub("push", "Write every local artifact and tuning record to the server")->callback([ctx] {
    run_push(*ctx);
  });
  sub("pull", "Copy every remote entry that passes its checks into the local caches")
      ->callback([ctx] { run_pull(*ctx); });
}

}  // namespace kiln::tool
