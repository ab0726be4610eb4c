// kiln info [--json] [--no-toolchain]: version, toolchain fingerprint and
// its parts, CUDA driver and devices (or why none), cache directory, and the
// values of the cache-invalidating environment variables. --no-toolchain
// leaves out what only the backends know (fingerprints, compilers, driver,
// devices), so kiln loads no backend plugin, LLVM or driver for it.
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "kiln/backends/toolchain.hpp"
#include "kiln/cache/remote_cache.hpp"
#include "kiln/core/options.hpp"
#include "kiln/distributed/collective.hpp"

namespace kiln::tool {

namespace {

// The remote cache tier: off, malformed, or its URL (redacted), mode and
// whether the server answers now (one bounded PING).
nlohmann::json remote_json() {
  nlohmann::json j = {{"built", remote_cache_built()}};
  Result<std::optional<RemoteCacheConfig>> config = RemoteCacheConfig::from_env();
  if (!config) {
    j["state"] = "off: " + config.error().message;
    return j;
  }
  if (!config->has_value()) {
    j["state"] = remote_cache_built() ? "off (KILN_REMOTE_CACHE is not set)"
                                      : "not built (install libhiredis-dev and libssl-dev)";
    return j;
  }
  const RemoteCacheConfig& c = **config;
  j["url"] = c.redacted();
  j["prefix"] = c.prefix;
  j["mode"] = c.mode == RemoteMode::kRead    ? "read"
              : c.mode == RemoteMode::kWrite ? "write"
                                             : "readwrite";
  j["signed"] = !c.secret.empty();
  j["loads_artifacts"] = c.loads_artifacts();
  RemoteCache* tier = RemoteCache::global();
  if (!tier) {
    j["state"] = "off: built without hiredis and OpenSSL";
    return j;
  }
  Result<std::string> version = tier->ping();
  j["state"] =
      version ? "connected (server " + *version + ")" : "unreachable: " + version.error().message;
  return j;
}

// The tuning overrides (Options, kiln/core/options.hpp) as set now: the
// environment replaces a declaration's arguments; a `kiln tune` flag
// replaces the environment.
nlohmann::json tuning_env_json() {
  const Environment env = Environment::process();
  nlohmann::json j = nlohmann::json::object();
  for (const char* name : {"KILN_SEARCH", "KILN_EFFORT", "KILN_BUDGET_S", "KILN_RETUNE",
                           "KILN_TUNING", "KILN_PRINT_AUTOTUNING", "KILN_AUTOTUNE_LOG"}) {
    auto value = env.get(name);
    j[name] = value ? nlohmann::json(*value) : nlohmann::json();
  }
  return j;
}

nlohmann::json info_json(bool toolchain) {
  const Options& options = Options::global();
  nlohmann::json j = toolchain ? toolchain_report().to_json() : nlohmann::json::object();
  j["kiln_version"] = kiln_version();
  j["cache_dir"] = options.cache_dir.string();
  j["cache_dir_source"] = options.cache_dir_source;
  j["cache_env"] = CacheEnvRegistry::global().snapshot().to_json();
  j["options"] = options.to_json();
  j["option_problems"] = Options::global_problems();
  j["tuning_env"] = tuning_env_json();
  j["remote_cache"] = remote_json();
  j["distributed"] = {{"mpi", mpi_built()},
                      {"strategies", {"independent", "broadcast", "parallel", "merge"}}};
  if (!mpi_built()) j["distributed"]["fix"] = mpi_absent_fix();
  return j;
}

std::string component_line(const ComponentStatus& s) {
  if (s.available) return s.version + "  (" + s.location + ")";
  return std::string(s.built ? "absent: " : "not built: ") + s.reason;
}

void print_toolchain() {
  const ToolchainReport& r = toolchain_report();
  std::cout << "Toolchain fingerprint  (one per backend: its keys carry only its compiler)\n";
  for (const auto& [name, f] : r.fingerprints) {
    std::cout << "  " << name << std::string(name.size() < 7 ? 7 - name.size() : 0, ' ') << "  "
              << f.hash().hex() << "  (" << f.compiler << ")\n";
  }
  std::cout << "  nvrtc    " << component_line(r.nvrtc) << "\n";
  std::cout << "  llvm     " << component_line(r.llvm) << "\n";
  std::cout << "  codegen  " << kiln_codegen_hash() << "  (templates and code generators)\n\n";
  std::cout << "CUDA driver  " << component_line(r.cuda.driver) << "\n";
  if (r.cuda.devices.empty()) {
    std::cout << "Devices      none: " << r.cuda.devices_reason << "\n";
  } else {
    for (const auto& d : r.cuda.devices) {
      std::printf("Device %d     %s  %s  %d SMs  %.1f GiB\n", d.index, d.name.c_str(),
                  d.arch.c_str(), d.sm_count, static_cast<double>(d.total_memory) / (1u << 30));
    }
  }
  if (r.cpu.available) {
    std::printf("CPU device   %s  %.1f MiB last-level cache\n", r.cpu.name.c_str(),
                static_cast<double>(r.cpu.cache_bytes) / (1u << 20));
  } else {
    std::cout << "CPU device   none: " << r.cpu.reason << "\n";
  }
  std::cout << "\n";
}

void print_text(bool toolchain) {
  const Options& options = Options::global();
  std::cout << "Kiln " << kiln_version() << "\n\n";
  if (toolchain) print_toolchain();
  std::cout << "Cache dir    " << options.cache_dir.string() << "  (from "
            << options.cache_dir_source << ")\n";
  const nlohmann::json remote = remote_json();
  std::cout << "Remote cache " << remote.value("url", std::string())
            << (remote.contains("url") ? "  " : "") << remote["state"].get<std::string>();
  if (remote.contains("mode"))
    std::cout << "  (" << remote["mode"].get<std::string>() << ", "
              << (remote["signed"].get<bool>() ? "signed" : "unsigned") << ")";
  std::cout << "\n";
  std::cout << "Distributed  "
            << (mpi_built() ? "MPI (kiln tune --distributed independent|broadcast|parallel|merge)"
                            : "not built: " + mpi_absent_fix())
            << "\n";
  std::cout << "\nCache-invalidating environment:\n";
  for (const auto& [name, value] : CacheEnvRegistry::global().snapshot().values) {
    std::cout << "  " << name << "=" << (value ? *value : "(unset)") << "\n";
  }
  std::cout << "\nTuning overrides  (over the kernel's declaration; a kiln tune flag wins):\n";
  const nlohmann::json tuning = tuning_env_json();
  for (auto it = tuning.begin(); it != tuning.end(); ++it)
    std::cout << "  " << it.key() << "="
              << (it->is_null() ? std::string("(unset)") : it->get<std::string>()) << "\n";
  for (const auto& p : Options::global_problems()) std::cout << "\nwarning: " << p << "\n";
}

}  // namespace

void add_info_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("info", "Show version, toolchain fingerprint, devices and cache");
  auto json = std::make_shared<bool>(false);
  auto no_toolchain = std::make_shared<bool>(false);
  cmd->add_flag("--json", *json, "Print one JSON object");
  cmd->add_flag("--no-toolchain", *no_toolchain,
                "Leave out the toolchain, driver and devices (loads no backend: fast)");
  cmd->callback([json, no_toolchain, &exit_code] {
    if (*json)
      std::cout << info_json(!*no_toolchain).dump(2) << "\n";
    else
      print_text(!*no_toolchain);
    exit_code = 0;
  });
}

}  // namespace kiln::tool
