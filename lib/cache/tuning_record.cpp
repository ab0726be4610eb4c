#include "kiln/cache/tuning_record.hpp"

#include <cmath>
#include <cstdio>
#include <ctime>
#include <map>
#include <nlohmann/json.hpp>

#include "kiln/core/error.hpp"
#include "kiln/core/keys.hpp"

namespace kiln {

namespace {

[[noreturn]] void bad(const std::string& what) {
  throw Error(ErrorCode::kInvalidArgument, "tuning record JSON: " + what);
}

const nlohmann::json& member(const nlohmann::json& json, const char* name) {
  if (!json.is_object() || !json.contains(name)) bad(std::string("missing field '") + name + "'");
  return json[name];
}

std::string string_member(const nlohmann::json& json, const char* name) {
  const nlohmann::json& v = member(json, name);
  if (!v.is_string()) bad(std::string("field '") + name + "' is not a string");
  return v.get<std::string>();
}

double number_member(const nlohmann::json& json, const char* name) {
  const nlohmann::json& v = member(json, name);
  if (!v.is_number()) bad(std::string("field '") + name + "' is not a number");
  return v.get<double>();
}

// A measurement's optional cost: absent, or a finite number of
// milliseconds at or above zero.
std::optional<double> cost_member(const nlohmann::json& json, const char* name) {
  if (!json.contains(name)) return std::nullopt;
  const double v = number_member(json, name);
  if (!std::isfinite(v) || v < 0)
    bad(std::string("field '") + name + "' is " + json[name].dump() +
        ", not a cost in milliseconds (finite, at least 0)");
  return v;
}

// The checksum of a record's JSON without its "checksum" field. nlohmann's
// dump sorts keys and writes doubles in their shortest exact form, so a
// record read back and written again hashes the same.
std::string checksum_of(const nlohmann::json& record) {
  return Hasher().field("kiln-tuning-record-v2").field(record.dump()).finish().hex();
}

}  // namespace

std::string DeviceIdentity::compute_capability() const {
  return std::to_string(cc_major) + "." + std::to_string(cc_minor);
}

nlohmann::json DeviceIdentity::to_json() const {
  return {{"arch", arch}, {"name", name}, {"compute_capability", compute_capability()}};
}

DeviceIdentity DeviceIdentity::from_json(const nlohmann::json& json) {
  DeviceIdentity d;
  d.arch = string_member(json, "arch");
  d.name = string_member(json, "name");
  std::string cc = string_member(json, "compute_capability");
  if (std::sscanf(cc.c_str(), "%d.%d", &d.cc_major, &d.cc_minor) != 2) {
    bad("compute_capability '" + cc + "' is not MAJOR.MINOR");
  }
  return d;
}

Hash128 TuningRecord::id() const {
  return Hasher()
      .field(tuning_key(problem, device.arch, toolchain, env, definition))
      .field(device.name)
      .finish();
}

nlohmann::json TuningRecord::to_json() const {
  nlohmann::json measured_json = nlohmann::json::array();
  for (const auto& m : measured) {
    nlohmann::json j = {{"config", m.config.to_json()}, {"time_ms", m.time_ms}, {"ok", m.ok}};
    if (!m.reason.empty()) j["reason"] = m.reason;
    measured_json.push_back(std::move(j));
  }
  nlohmann::json j = {{"id", id().hex()},
                      {"kernel", kernel()},
                      {"problem", problem.to_json()},
                      {"definition", definition.hex()},
                      {"device", device.to_json()},
                      {"toolchain", toolchain.to_json()},
                      {"env", env.to_json()},
                      {"best", {{"config", best.to_json()}, {"time_ms", best_time_ms}}},
                      {"created", created}};
  if (!measured.empty()) j["measured"] = std::move(measured_json);
  if (!reference.empty()) j["reference"] = reference;
  j["checksum"] = checksum_of(j);
  // The costs are added after the checksum, under one of their own: a Kiln
  // from before them recomputes "checksum" from the fields it knows, so
  // its reader keeps serving records this one writes (a cache shared by
  // machines mid-upgrade), and damaged costs are still caught here.
  nlohmann::json costs = nlohmann::json::array();
  bool any_cost = false;
  for (std::size_t i = 0; i < measured.size(); ++i) {
    const MeasuredConfig& m = measured[i];
    costs.push_back({m.compile_ms ? nlohmann::json(*m.compile_ms) : nlohmann::json(),
                     m.benchmark_ms ? nlohmann::json(*m.benchmark_ms) : nlohmann::json()});
    if (m.compile_ms) j["measured"][i]["compile_ms"] = *m.compile_ms;
    if (m.benchmark_ms) j["measured"][i]["benchmark_ms"] = *m.benchmark_ms;
    any_cost = any_cost || m.compile_ms || m.benchmark_ms;
  }
  if (any_cost)
    j["costs_checksum"] = Hasher().field("kiln-tuning-costs-v1").field(costs.dump()).finish().hex();
  return j;
}

TuningRecord TuningRecord::from_json(const nlohmann::json& json) {
  TuningRecord r;
  try {
    r.problem = ProblemKey::from_json(member(json, "problem"));
    if (string_member(json, "kernel") != r.problem.kernel())
      bad("'kernel' differs from the problem's");
    const std::string definition = string_member(json, "definition");
    auto parsed = Hash128::from_hex(definition);
    if (!parsed) bad("'definition' is not 32 hex digits: '" + definition + "'");
    r.definition = *parsed;
    r.device = DeviceIdentity::from_json(member(json, "device"));
    r.toolchain = ToolchainFingerprint::from_json(member(json, "toolchain"));
    r.env = EnvSnapshot::from_json(member(json, "env"));
    const nlohmann::json& best = member(json, "best");
    r.best = Config::from_json(member(best, "config"));
    r.best_time_ms = number_member(best, "time_ms");
    if (json.contains("measured")) {
      const nlohmann::json& list = json["measured"];
      if (!list.is_array()) bad("'measured' is not an array");
      for (const auto& m : list) {
        MeasuredConfig mc;
        mc.config = Config::from_json(member(m, "config"));
        mc.time_ms = number_member(m, "time_ms");
        mc.ok = m.value("ok", true);
        mc.reason = m.value("reason", std::string());
        mc.compile_ms = cost_member(m, "compile_ms");
        mc.benchmark_ms = cost_member(m, "benchmark_ms");
        r.measured.push_back(std::move(mc));
      }
    }
    r.created = string_member(json, "created");
    r.reference = json.value("reference", std::string());
  } catch (const nlohmann::json::exception& e) {
    bad(e.what());
  }
  // The id is derived, so a mismatch means the record was edited or written
  // by code that hashes differently: either way it must not be served.
  std::string stored = string_member(json, "id");
  if (stored != r.id().hex()) {
    throw Error(ErrorCode::kCorrupt, "tuning record for " + r.problem.canonical() + ": stored id " +
                                         stored + " does not match its content (" + r.id().hex() +
                                         ")");
  }
  // The checksum covers what the id does not: the served config, its time
  // and the evidence. A hand-edited winner must not pass for a measured one.
  const nlohmann::json rewritten = r.to_json();
  std::string checksum = string_member(json, "checksum");
  if (checksum != rewritten["checksum"].get<std::string>()) {
    throw Error(ErrorCode::kCorrupt, "tuning record for " + r.problem.canonical() +
                                         ": its checksum does not match its content (best "
                                         "config, times or measurements edited or damaged)");
  }
  const std::string stored_costs =
      json.contains("costs_checksum") ? json["costs_checksum"].dump() : std::string();
  const std::string want_costs =
      rewritten.contains("costs_checksum") ? rewritten["costs_checksum"].dump() : std::string();
  if (stored_costs != want_costs) {
    throw Error(ErrorCode::kCorrupt, "tuning record for " + r.problem.canonical() +
                                         ": its costs_checksum does not match its measurements' "
                                         "compile_ms and benchmark_ms (edited or damaged)");
  }
  return r;
}

Status check_identity(const TuningRecord& record, const TuningIdentity& present) {
  std::string out;
  auto add = [&](const std::string& part) { out += (out.empty() ? "" : "; ") + part; };
  if (record.definition != present.definition) {
    // No hashes in the text: records of several earlier versions of one
    // kernel then give one warning (TuningCache::lookup logs by reason).
    add("the kernel changed since it was tuned, or is another kernel of that name (its source, "
        "headers, entry, defines, options, space, spec or version differ)");
  }
  const DeviceIdentity& d = record.device;
  if (d.arch != present.device.arch || d.name != present.device.name) {
    add("device " + d.name + " (" + d.arch + "), now " + present.device.name + " (" +
        present.device.arch + ")");
  }
  const ToolchainFingerprint& t = record.toolchain;
  const ToolchainFingerprint& p = present.toolchain;
  if (t.kiln_version != p.kiln_version) add("Kiln " + t.kiln_version + ", now " + p.kiln_version);
  if (t.backend != p.backend) add("backend " + t.backend + ", now " + p.backend);
  if (t.compiler != p.compiler) add("compiler " + t.compiler + ", now " + p.compiler);
  if (t.codegen_hash != p.codegen_hash) add("code generators changed (codegen hash)");
  if (record.env != present.env) {
    auto text = [](const std::optional<std::string>& v) { return v ? "'" + *v + "'" : "unset"; };
    std::map<std::string, std::pair<std::optional<std::string>, std::optional<std::string>>> vars;
    for (const auto& [n, v] : record.env.values) vars[n].first = v;
    for (const auto& [n, v] : present.env.values) vars[n].second = v;
    for (const auto& [n, v] : vars) {
      if (v.first != v.second) add(n + " was " + text(v.first) + ", now " + text(v.second));
    }
    if (out.empty()) add("the list of cache-invalidating variables changed");
  }
  if (out.empty()) return ok_status();
  return make_error(ErrorCode::kNotFound, out);
}

std::string utc_timestamp() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace kiln
