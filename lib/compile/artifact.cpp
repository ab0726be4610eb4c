// Artifact metadata as JSON: the cache stores the binary as raw bytes and
// this next to it. The binary's size and hash are recorded so a reader can
// tell a torn or swapped pair from a good one.
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "kiln/compile/compile.hpp"
#include "kiln/process/worker_protocol.hpp"

namespace kiln {

nlohmann::json Artifact::to_json() const {
  const std::string_view bytes = binary ? std::string_view(*binary) : std::string_view();
  return {{"format_version", kFormatVersion},
          {"key", key.hex()},
          {"kernel", kernel},
          {"config", config.to_json()},
          {"entry", entry},
          {"lowered_name", lowered_name},
          {"format", binary_format_name(format)},
          {"arch", arch},
          {"binary_size", bytes.size()},
          {"binary_hash", hash128(bytes).hex()},
          {"compiler", compiler},
          {"options", options},
          {"log", log},
          {"compile_seconds", compile_seconds},
          {"group_size", group_size}};
}

namespace {

[[noreturn]] void corrupt(const std::string& what) {
  throw Error(ErrorCode::kCorrupt,
              "artifact metadata " + what + ": drop this cache entry (it will be recompiled)");
}

}  // namespace

Artifact Artifact::from_json(const nlohmann::json& json, std::string binary) {
  if (!json.is_object()) corrupt("is not a JSON object");
  if (!json.contains("format_version") || json["format_version"] != kFormatVersion) {
    corrupt(
        "has format_version " +
        (json.contains("format_version") ? json["format_version"].dump() : std::string("(none)")) +
        ", this Kiln reads " + std::to_string(kFormatVersion));
  }
  Artifact a;
  try {
    auto key = Hash128::from_hex(json.at("key").get<std::string>());
    if (!key) corrupt("has a malformed key");
    a.key = *key;
    a.kernel = json.at("kernel").get<std::string>();
    a.config = Config::from_json(json.at("config"));
    a.entry = json.at("entry").get<std::string>();
    a.lowered_name = json.at("lowered_name").get<std::string>();
    auto format = parse_binary_format(json.at("format").get<std::string>());
    if (!format) corrupt("names an unknown format " + json.at("format").dump());
    a.format = *format;
    a.arch = json.at("arch").get<std::string>();
    a.compiler = json.at("compiler").get<std::string>();
    a.options = json.at("options").get<std::vector<std::string>>();
    a.log = json.at("log").get<std::string>();
    a.compile_seconds = json.at("compile_seconds").get<double>();
    // Whole numbers checked (a float or a negative here is a damaged entry,
    // not an unchecked cast): the same reader as the worker messages'.
    a.group_size = worker::whole<std::size_t>(json.at("group_size"));
    if (worker::whole<std::size_t>(json.at("binary_size")) != binary.size()) {
      corrupt("says the binary has " + json.at("binary_size").dump() + " bytes, it has " +
              std::to_string(binary.size()));
    }
    if (json.at("binary_hash").get<std::string>() != hash128(binary).hex()) {
      corrupt("does not match the binary's hash");
    }
  } catch (const nlohmann::json::exception& e) {
    corrupt(std::string("is malformed: ") + e.what());
  } catch (const std::out_of_range& e) {  // worker::whole's
    corrupt(std::string("is malformed: ") + e.what());
  } catch (const Error& e) {
    if (e.code() == ErrorCode::kCorrupt) throw;
    corrupt(std::string("is malformed: ") + e.what());
  }
  a.binary = std::make_shared<const std::string>(std::move(binary));
  return a;
}

}  // namespace kiln
