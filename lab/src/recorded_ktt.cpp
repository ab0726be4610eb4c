// KTT's output file as Kernel Tuner's cache file layout (recorded_ktt.hpp).
#include "recorded_ktt.hpp"

#include <algorithm>
#include <cctype>
#include <exception>
#include <optional>

#include "recorded_t4.hpp"

namespace kiln::detail {
namespace {

using Ordered = nlohmann::ordered_json;

// KTT's TimeUnit names (Nanoseconds, Microseconds, Milliseconds, Seconds),
// which the T4 reader scales by.
bool known_unit(std::string unit) {
  std::transform(unit.begin(), unit.end(), unit.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return unit == "nanoseconds" || unit == "microseconds" || unit == "milliseconds" ||
         unit == "seconds";
}

// A KTT status as a T4 invalidity (recorded_t4.cpp turns those into the
// cache layout's failure names). A validation failure ran but computed the
// wrong answer: it keeps a name of its own and fails its launch in a
// replay, as any failure but a compile failure does.
std::string invalidity_of(const std::string& status) {
  if (status == "Ok") return "correct";
  if (status == "CompilationFailed") return "compile";
  if (status == "ComputationFailed") return "runtime";
  if (status == "DeviceLimitsExceeded") return "constraints";
  if (status == "ValidationFailed") return "ValidationFailedConfig";
  return status;
}

// result[name] as a duration: 0 when absent, nullopt when not a number.
std::optional<double> duration(const Ordered& result, const char* name) {
  if (!result.contains(name)) return 0.0;
  if (!result[name].is_number()) return std::nullopt;
  return result[name].get<double>();
}

Result<Ordered> to_t4_result(const Ordered& result, const std::string& at) {
  if (!result.is_object() || !result.contains("Configuration") ||
      !result["Configuration"].is_array())
    return make_error(ErrorCode::kInvalidArgument,
                      at + " has no \"Configuration\" list: not a KTT result");
  Ordered configuration = Ordered::object();
  for (const Ordered& p : result["Configuration"]) {
    if (!p.is_object() || !p.contains("Name") || !p["Name"].is_string() || !p.contains("Value"))
      return make_error(ErrorCode::kInvalidArgument,
                        at + "'s Configuration holds " + p.dump() +
                            ", not a {\"Name\": ..., \"Value\": ...} parameter");
    const std::string name = p["Name"].get<std::string>();
    if (configuration.contains(name))
      return make_error(ErrorCode::kInvalidArgument,
                        at + "'s Configuration sets \"" + name + "\" twice: keep one");
    configuration[name] = p["Value"];
  }
  if (!result.contains("Status") || !result["Status"].is_string())
    return make_error(ErrorCode::kInvalidArgument,
                      at + " has no \"Status\" (Ok, CompilationFailed, ComputationFailed, ...)");
  const std::string invalidity = invalidity_of(result["Status"].get<std::string>());
  Ordered t4 = {{"configuration", configuration},
                {"invalidity", invalidity},
                {"objectives", Ordered::array({"time"})}};
  const char* costs[] = {"TotalDuration", "TotalOverhead", "DataMovementOverhead",
                         "ValidationOverhead", "SearcherOverhead"};
  double value[5];
  for (int k = 0; k < 5; ++k) {
    const std::optional<double> d = duration(result, costs[k]);
    if (!d)
      return make_error(ErrorCode::kInvalidArgument,
                        at + "'s " + costs[k] + " is " + result[costs[k]].dump() +
                            ", which is not a duration: give a number or remove it");
    value[k] = *d;
  }
  if (invalidity == "correct") {
    if (!result.contains("TotalDuration") || value[0] <= 0)
      return make_error(ErrorCode::kInvalidArgument,
                        at + " is Ok but has no TotalDuration above zero (" +
                            (result.contains("TotalDuration") ? result["TotalDuration"].dump()
                                                              : std::string("none")) +
                            "): a replay needs each working config's run time");
    t4["measurements"] =
        Ordered::array({Ordered{{"name", "time"}, {"value", value[0]}, {"unit", ""}}});
  }
  Ordered times = Ordered::object();
  if (result.contains("TotalOverhead"))
    times["compilation"] = std::max(0.0, value[1] - value[2] - value[3] - value[4]);
  times["benchmark"] = value[0] + value[2] + value[3];
  t4["times"] = times;
  return t4;
}

}  // namespace

bool is_ktt_output(const nlohmann::json& j) {
  return j.is_object() && j.contains("Results") && j["Results"].is_array() &&
         j.contains("Metadata") && j["Metadata"].is_object() && !j.contains("cache");
}

Result<nlohmann::json> ktt_as_cache_layout(std::string_view text, const std::string& where) {
  try {
    const Ordered j = Ordered::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("Results") || !j["Results"].is_array() ||
        !j.contains("Metadata") || !j["Metadata"].is_object())
      return make_error(ErrorCode::kInvalidArgument, where + " is not a KTT output file");
    const Ordered& metadata = j["Metadata"];
    if (!metadata.contains("TimeUnit") || !metadata["TimeUnit"].is_string() ||
        !known_unit(metadata["TimeUnit"].get<std::string>()))
      return make_error(ErrorCode::kInvalidArgument,
                        where + ": Metadata.TimeUnit is " +
                            (metadata.contains("TimeUnit") ? metadata["TimeUnit"].dump()
                                                           : std::string("missing")) +
                            ", not one of Nanoseconds, Microseconds, Milliseconds or Seconds: "
                            "a replay cannot tell its times' scale");
    const Ordered& results = j["Results"];
    if (results.empty())
      return make_error(ErrorCode::kInvalidArgument, where + " holds no results");
    Ordered t4_results = Ordered::array();
    std::string kernel;
    std::size_t kernel_from = 0;
    for (std::size_t i = 0; i < results.size(); ++i) {
      const std::string at = where + ": result " + std::to_string(i);
      const Ordered& result = results[i];
      // One kernel per space: KTT tunes several kernels into one file, and
      // their parameters differ.
      if (result.is_object() && result.contains("KernelName") && result["KernelName"].is_string()) {
        const std::string name = result["KernelName"].get<std::string>();
        if (kernel.empty()) {
          kernel = name;
          kernel_from = i;
        } else if (name != kernel) {
          return make_error(ErrorCode::kInvalidArgument,
                            where + ": results " + std::to_string(kernel_from) + " and " +
                                std::to_string(i) + " tune different kernels (\"" + kernel +
                                "\" and \"" + name +
                                "\"): a recorded space is one kernel's; keep one kernel's "
                                "results in the file");
        }
      }
      Result<Ordered> t4 = to_t4_result(result, at);
      if (!t4) return t4.error();
      t4_results.push_back(std::move(*t4));
    }
    const Ordered t4 = {{"metadata", {{"timeunit", metadata["TimeUnit"]}}},
                        {"results", std::move(t4_results)}};
    Result<nlohmann::json> layout = t4_as_cache_layout(t4, where);
    if (!layout) return layout.error();
    if (metadata.contains("Device") && metadata["Device"].is_string())
      (*layout)["device_name"] = metadata["Device"].get<std::string>();
    if (!kernel.empty()) (*layout)["kernel_name"] = kernel;
    return layout;
  } catch (const std::exception& e) {
    return make_error(ErrorCode::kInvalidArgument,
                      where + " is a malformed KTT output file: " + e.what());
  }
}

}  // namespace kiln::detail
