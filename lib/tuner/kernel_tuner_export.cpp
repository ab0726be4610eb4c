// kernel_tuner_cache and gzip_text: see kiln/tuner/kernel_tuner_export.hpp.
#include "kiln/tuner/kernel_tuner_export.hpp"

#include <zlib.h>

#include <algorithm>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "kiln/tuner/measurement.hpp"

namespace kiln {

Result<std::string> gzip_text(std::string_view text) {
  if (text.size() > std::numeric_limits<uInt>::max())  // one deflate call's input
    return make_error(ErrorCode::kInvalidArgument,
                      "cannot gzip " + std::to_string(text.size()) + " bytes in one piece");
  z_stream z{};
  // 15 + 16: the largest window, with a gzip header and trailer.
  if (deflateInit2(&z, Z_BEST_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    return make_error(ErrorCode::kInternal, "zlib could not start a gzip stream");
  std::string out(deflateBound(&z, static_cast<uLong>(text.size())), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  z.avail_in = static_cast<uInt>(text.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  const int done = deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  if (done != Z_STREAM_END)
    return make_error(ErrorCode::kInternal,
                      "zlib could not gzip " + std::to_string(text.size()) + " bytes");
  return out;
}

namespace {

// Kernel Tuner's name for a failed measurement: a replay fails a
// CompilationFailedConfig at its compile, anything else at its run. A
// tuner's record gives the outcome first ("compile_failed: ...",
// autotuner.cpp); only a reason without one (a record from another path,
// or a timeout, which may be the compile's or the run's) is judged by its
// words, which once labelled a launch failure whose log mentioned a
// compiler a compile failure.
const char* kernel_tuner_failure(const std::string& reason) {
  const std::string_view head = std::string_view(reason).substr(0, reason.find(':'));
  std::optional<Outcome> outcome;
  try {
    outcome = parse_outcome(head);
  } catch (const Error&) {
  }
  if (outcome == Outcome::kCompileFailed || outcome == Outcome::kLoadFailed)
    return "CompilationFailedConfig";
  if (outcome && outcome != Outcome::kTimeout) return "RuntimeFailedConfig";
  const std::string_view rest =
      outcome ? std::string_view(reason).substr(head.size()) : std::string_view(reason);
  return rest.find("compil") != std::string_view::npos ? "CompilationFailedConfig"
                                                       : "RuntimeFailedConfig";
}

}  // namespace

Result<nlohmann::json> kernel_tuner_cache(const TuningRecord& record) {
  if (record.measured.empty())
    return make_error(ErrorCode::kInvalidArgument,
                      "the tuning record of " + record.problem.canonical() +
                          " holds no measurements (it was imported or saved without them)");
  std::vector<std::string> keys;
  for (const auto& [name, value] : record.measured.front().config.values()) keys.push_back(name);
  nlohmann::json params = nlohmann::json::object();
  nlohmann::json cache = nlohmann::json::object();
  for (const MeasuredConfig& m : record.measured) {
    nlohmann::json entry = nlohmann::json::object();
    std::string id;
    for (const auto& name : keys) {
      if (!m.config.has(name)) continue;
      nlohmann::json v = value_to_json(m.config.at(name));
      entry[name] = v;
      id += (id.empty() ? "" : ",") + (v.is_string() ? v.get<std::string>() : v.dump());
      auto& list = params[name];
      if (std::find(list.begin(), list.end(), v) == list.end()) list.push_back(v);
    }
    if (m.ok) {
      entry["time"] = m.time_ms;
      entry["times"] = nlohmann::json::array({m.time_ms});
    } else {
      entry["time"] = kernel_tuner_failure(m.reason);
      entry["times"] = nlohmann::json::array();
    }
    // Kernel Tuner's costs are per config, in milliseconds; a record from
    // before Kiln kept them says 0, as Kernel Tuner does for a cost it did
    // not time.
    entry["compile_time"] = m.compile_ms.value_or(0);
    entry["verification_time"] = 0;  // in Kiln's benchmark time: the check runs in it
    entry["benchmark_time"] = m.benchmark_ms.value_or(0);
    entry["strategy_time"] = 0;
    entry["framework_time"] = 0;
    entry["timestamp"] = record.created;
    cache[id] = entry;
  }
  for (auto& [name, list] : params.items()) std::sort(list.begin(), list.end());
  return nlohmann::json{{"device_name", record.device.name},
                        {"kernel_name", record.kernel()},
                        {"problem_size", record.problem.canonical()},
                        {"tune_params_keys", keys},
                        {"tune_params", params},
                        {"objective", "time"},
                        {"cache", cache}};
}

}  // namespace kiln
