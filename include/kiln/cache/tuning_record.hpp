// A tuning record: the winning config for one problem on one device with
// one toolchain and environment, with the evidence (its time, and
// optionally every measured config). The unit the tuning cache stores,
// exports and imports.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "kiln/core/config.hpp"
#include "kiln/core/error.hpp"
#include "kiln/core/fingerprint.hpp"
#include "kiln/core/hash.hpp"
#include "kiln/core/options.hpp"
#include "kiln/core/problem.hpp"

namespace kiln {

// The device a record was tuned on. Both arch and name must match for a
// record to be served: two parts of one arch (H100 PCIe and SXM) can
// prefer different configs.
struct DeviceIdentity {
  std::string arch;  // "sm_90a", or "host" for the CPU
  std::string name;  // "NVIDIA H100 80GB HBM3"
  int cc_major = 0;  // compute capability; 0.0 for the CPU
  int cc_minor = 0;

  std::string compute_capability() const;  // "9.0"
  nlohmann::json to_json() const;
  static DeviceIdentity from_json(const nlohmann::json& json);
  bool operator==(const DeviceIdentity&) const = default;
};

// What a lookup compares a record against: the kernel's definition hash
// and this process's device, toolchain fingerprint and cache-invalidating
// environment.
struct TuningIdentity {
  // definition_hash(kernel) (kiln/tuner/tuner.hpp). First, so that an initializer
  // written without it does not compile: a zero hash would miss in silence.
  // Zero for decisions whose problem key already names their code (the
  // framework's tactic records: the runners' versions are in the key).
  Hash128 definition;
  DeviceIdentity device;
  ToolchainFingerprint toolchain;
  EnvSnapshot env;
};

struct MeasuredConfig {
  MeasuredConfig() = default;
  // The result alone; the costs, when known, are set after.
  MeasuredConfig(Config c, double time, bool succeeded, std::string why)
      : config(std::move(c)), time_ms(time), ok(succeeded), reason(std::move(why)) {}

  Config config;
  double time_ms = 0;
  bool ok = true;      // false: failed to compile, launch or verify
  std::string reason;  // why not ok
  // What it cost the tuning that measured it, in milliseconds: its share of
  // the compile and its benchmark's wall time. Empty where not known (a
  // record of a Kiln before these, a shipped table). Exports and replays read
  // them; nothing served depends on them.
  std::optional<double> compile_ms;
  std::optional<double> benchmark_ms;
};

struct TuningRecord {
  ProblemKey problem{"unset"};  // includes the kernel name; set it
  Hash128 definition;           // the kernel's definition_hash when it was tuned
  DeviceIdentity device;
  ToolchainFingerprint toolchain;
  EnvSnapshot env;
  Config best;
  double best_time_ms = 0;
  std::vector<MeasuredConfig> measured;  // optional: every config tried
  std::string created;                   // UTC, ISO 8601; filled by put() when empty
  // What the winner's outputs were checked against when it was tuned:
  // "default", "user", "consensus of N configs", or "none" (saved unchecked).
  std::string reference;

  const std::string& kernel() const { return problem.kernel(); }
  // tuning_key(problem, arch, toolchain, env, definition) with the device
  // name folded in: records of two devices of one arch live side by side.
  Hash128 id() const;
  TuningIdentity identity() const { return {definition, device, toolchain, env}; }

  // With "id" and a "checksum" over every other field (the best config, its
  // time and the measured list included).
  nlohmann::json to_json() const;
  // Throws kiln::Error (kInvalidArgument) naming the bad field, or
  // (kCorrupt) when the stored id or checksum does not match the record's
  // content: an edited record is refused like a damaged one.
  static TuningRecord from_json(const nlohmann::json& json);
};

// Whether `record` may be served to `present`: ok when it may, else a
// kNotFound error whose message is one line naming each part that differs
// (the kernel's definition, device, toolchain parts, variables).
[[nodiscard]] Status check_identity(const TuningRecord& record, const TuningIdentity& present);

// The current time as "2026-11-21T05:30:00Z".
std::string utc_timestamp();

}  // namespace kiln
