// Kernel Tuner's T4 output layout as its cache file layout (recorded_t4.hpp).
#include "recorded_t4.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <exception>
#include <optional>
#include <unordered_map>
#include <vector>

namespace kiln::detail {
namespace {

using Ordered = nlohmann::ordered_json;

// Milliseconds per unit of a T4 duration. The file's "metadata.timeunit"
// sets it for every time (the hub's files spell it "miliseconds"); a
// measurement's own non-empty "unit" overrides it for that measurement.
std::optional<double> ms_per(std::string unit) {
  std::transform(unit.begin(), unit.end(), unit.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (unit.empty() || unit == "ms" || unit == "millisecond" || unit == "milliseconds" ||
      unit == "miliseconds")
    return 1.0;
  if (unit == "s" || unit == "second" || unit == "seconds") return 1000.0;
  if (unit == "us" || unit == "microsecond" || unit == "microseconds") return 1e-3;
  if (unit == "ns" || unit == "nanosecond" || unit == "nanoseconds") return 1e-6;
  return std::nullopt;
}

// A T4 invalidity as the cache layout's failure name, so that the replay
// fails it the same way (a compile failure fails to compile, the rest fail
// their launch). An invalidity T4 does not define is kept as it is.
std::string failure_name(const std::string& invalidity) {
  if (invalidity == "compile") return "CompilationFailedConfig";
  if (invalidity == "runtime") return "RuntimeFailedConfig";
  if (invalidity == "constraints") return "InvalidConfig";
  return invalidity;
}

// A duration in ms: integers stay as written when no scaling is needed, so
// a file read through either layout gives the same values.
nlohmann::json in_ms(const Ordered& v, double scale) {
  if (scale == 1.0) return nlohmann::json(v);
  return v.get<double>() * scale;
}

// Each parameter's list: its values in the order first seen, sorted when
// they are all numbers, all text or all booleans, since searches read a
// list's order as the parameter's scale (neighbours, ranks).
nlohmann::json parameter_list(const std::vector<Ordered>& seen) {
  nlohmann::json list = nlohmann::json::array();
  for (const Ordered& v : seen) list.push_back(nlohmann::json(v));
  auto same_kind = [&](auto is_kind) { return std::all_of(list.begin(), list.end(), is_kind); };
  if (same_kind([](const nlohmann::json& v) { return v.is_number(); }) ||
      same_kind([](const nlohmann::json& v) { return v.is_string(); }) ||
      same_kind([](const nlohmann::json& v) { return v.is_boolean(); }))
    std::sort(list.begin(), list.end());
  return list;
}

// The cache key Kernel Tuner would write: the values joined by commas,
// text without quotes.
std::string cache_key(const Ordered& configuration, const std::vector<std::string>& keys) {
  std::string key;
  for (const std::string& name : keys) {
    const Ordered& v = configuration.at(name);
    key += (key.empty() ? "" : ",") + (v.is_string() ? v.get<std::string>() : v.dump());
  }
  return key;
}

// The configuration's values as a JSON array, in `keys` order: its identity.
// The cache key is not one: {a: "1,2", b: 3} and {a: 1, b: "2,3"} both
// join to "1,2,3".
std::string t4_identity(const Ordered& configuration, const std::vector<std::string>& keys) {
  Ordered values = Ordered::array();
  for (const std::string& name : keys) values.push_back(configuration.at(name));
  return values.dump();
}

// The objective a result ranks by: the first of its "objectives", or
// nullopt when it names none.
std::optional<std::string> objective_of(const Ordered& result) {
  if (!result.contains("objectives") || !result["objectives"].is_array() ||
      result["objectives"].empty() || !result["objectives"][0].is_string())
    return std::nullopt;
  return result["objectives"][0].get<std::string>();
}

// One result as a cache record: its parameters, "time" (a failure's name
// when the result is invalid), the figure of `objective` when that is not
// time, and its compile and benchmark costs. T4
// files before Kernel Tuner's "benchmark" timing carry only the runs'
// "runtimes": their sum stands for the benchmark's cost.
Result<nlohmann::json> to_record(const Ordered& result, const std::vector<std::string>& keys,
                                 double scale, const std::string& objective,
                                 const std::string& at) {
  nlohmann::json record = nlohmann::json::object();
  for (const std::string& name : keys) record[name] = nlohmann::json(result["configuration"][name]);
  const std::string invalidity = result.contains("invalidity") && result["invalidity"].is_string()
                                     ? result["invalidity"].get<std::string>()
                                     : "correct";
  if (invalidity != "correct") {
    record["time"] = failure_name(invalidity);
  } else {
    const Ordered* time = nullptr;
    std::string names;
    if (result.contains("measurements") && result["measurements"].is_array())
      for (const Ordered& m : result["measurements"]) {
        if (!m.is_object() || !m.contains("name")) continue;
        names += (names.empty() ? "" : ", ") + m["name"].dump();
        if (m["name"] == "time" && m.contains("value")) time = &m;
      }
    if (!time)
      return make_error(ErrorCode::kInvalidArgument,
                        at + " is valid but has no \"time\" measurement (measurements: " +
                            (names.empty() ? "none" : names) +
                            "): a replay needs each working config's run time");
    double unit = scale;
    if (time->contains("unit") && (*time)["unit"].is_string() &&
        !(*time)["unit"].get<std::string>().empty()) {
      std::optional<double> own = ms_per((*time)["unit"].get<std::string>());
      if (!own)
        return make_error(
            ErrorCode::kInvalidArgument,
            at + "'s time has the unit " + (*time)["unit"].dump() + ", not one of ms, s, us or ns");
      unit = *own;
    }
    const Ordered& value = (*time)["value"];
    record["time"] = value.is_number() ? in_ms(value, unit) : nlohmann::json(value);
    // Another objective's figure as the cache layout keeps it: a field of
    // that name, as written (a figure has no time unit to convert).
    if (objective != "time")
      for (const Ordered& m : result["measurements"])
        if (m.is_object() && m.value("name", Ordered()) == objective && m.contains("value"))
          record[objective] = nlohmann::json(m["value"]);
  }
  if (!result.contains("times")) return record;
  const Ordered& times = result["times"];
  if (!times.is_object())
    return make_error(ErrorCode::kInvalidArgument, at + "'s \"times\" is not an object");
  // A cost that is there but no number is refused, as the cache layout's
  // is: it was dropped, and the config replayed as free to compile or run.
  for (const char* name : {"compilation", "benchmark"})
    if (times.contains(name) && !times[name].is_number())
      return make_error(ErrorCode::kInvalidArgument,
                        at + "'s times." + name + " is " + times[name].dump() +
                            ", which is not a duration: give a number or remove it");
  if (times.contains("runtimes") && !times["runtimes"].is_array())
    return make_error(ErrorCode::kInvalidArgument,
                      at + "'s times.runtimes is " + times["runtimes"].dump() +
                          ", not a list of durations: give a list or remove it");
  if (times.contains("compilation")) record["compile_time"] = in_ms(times["compilation"], scale);
  if (times.contains("benchmark")) {
    record["benchmark_time"] = in_ms(times["benchmark"], scale);
  } else if (times.contains("runtimes")) {
    double sum = 0;
    for (const Ordered& run : times["runtimes"]) {
      if (!run.is_number())
        return make_error(ErrorCode::kInvalidArgument,
                          at + "'s runtimes hold " + run.dump() + ", which is not a duration");
      sum += run.get<double>();
    }
    record["benchmark_time"] = sum * scale;
  }
  return record;
}

// Milliseconds per unit of the file's times (metadata.timeunit; 1 when absent).
Result<double> time_scale(const Ordered& j, const std::string& where) {
  if (!j.contains("metadata") || !j["metadata"].is_object() || !j["metadata"].contains("timeunit"))
    return 1.0;
  const Ordered& unit = j["metadata"]["timeunit"];
  std::optional<double> ms = unit.is_string() ? ms_per(unit.get<std::string>()) : std::nullopt;
  if (!ms)
    return make_error(ErrorCode::kInvalidArgument,
                      where + ": metadata.timeunit " + unit.dump() +
                          " is not one of milliseconds, seconds, microseconds or "
                          "nanoseconds");
  return *ms;
}

// One objective for the file, as the cache layout has: the first any
// result names (Kernel Tuner writes the run's objective into each).
Result<std::string> file_objective(const Ordered& results, const std::string& where) {
  std::string objective = "time";
  std::optional<std::size_t> objective_from;
  for (std::size_t i = 0; i < results.size(); ++i) {
    if (!results[i].is_object()) continue;
    const std::optional<std::string> named = objective_of(results[i]);
    if (!named) continue;
    if (!objective_from) {
      objective = *named;
      objective_from = i;
    } else if (*named != objective) {
      return make_error(ErrorCode::kInvalidArgument,
                        where + ": results " + std::to_string(*objective_from) + " and " +
                            std::to_string(i) + " rank by different objectives (\"" + objective +
                            "\" and \"" + *named + "\"): a replay ranks every config by one");
    }
  }
  return objective;
}

}  // namespace

bool is_t4_output(const nlohmann::json& j) {
  return j.is_object() && j.contains("results") && j["results"].is_array() && !j.contains("cache");
}

Result<nlohmann::json> t4_as_cache_layout(std::string_view text, const std::string& where) {
  const Ordered j = Ordered::parse(text, nullptr, false);
  if (j.is_discarded())
    return make_error(ErrorCode::kInvalidArgument, where + " is not a T4 output file");
  return t4_as_cache_layout(j, where);
}

Result<nlohmann::json> t4_as_cache_layout(const nlohmann::ordered_json& j,
                                          const std::string& where) {
  try {
    if (!j.is_object() || !j.contains("results") || !j["results"].is_array())
      return make_error(ErrorCode::kInvalidArgument, where + " is not a T4 output file");
    Result<double> scale = time_scale(j, where);
    if (!scale) return scale.error();
    const Ordered& results = j["results"];
    if (results.empty())
      return make_error(ErrorCode::kInvalidArgument, where + " holds no results");
    std::vector<std::string> keys;
    std::vector<std::vector<Ordered>> seen;  // each parameter's values, as in `keys`
    nlohmann::json cache = nlohmann::json::object();
    std::unordered_map<std::string, std::size_t> first_of;  // t4_identity -> result index
    Result<std::string> objective = file_objective(results, where);
    if (!objective) return objective.error();
    for (std::size_t i = 0; i < results.size(); ++i) {
      const std::string at = where + ": result " + std::to_string(i);
      const Ordered& result = results[i];
      if (!result.is_object() || !result.contains("configuration") ||
          !result["configuration"].is_object())
        return make_error(ErrorCode::kInvalidArgument,
                          at + " has no \"configuration\" object: not a T4 result");
      const Ordered& configuration = result["configuration"];
      if (i == 0) {
        for (const auto& [name, value] : configuration.items()) keys.push_back(name);
        seen.resize(keys.size());
      }
      bool same_names = configuration.size() == keys.size();
      for (const std::string& name : keys) same_names = same_names && configuration.contains(name);
      if (!same_names)
        return make_error(ErrorCode::kInvalidArgument,
                          at + "'s configuration names the parameters " +
                              nlohmann::json(configuration).dump() + ", not those of result 0 (" +
                              nlohmann::json(keys).dump() +
                              "): every result must set the same parameters");
      for (std::size_t p = 0; p < keys.size(); ++p) {
        const Ordered& v = configuration[keys[p]];
        if (std::find(seen[p].begin(), seen[p].end(), v) == seen[p].end()) seen[p].push_back(v);
      }
      std::string key = cache_key(configuration, keys);
      const std::string identity = t4_identity(configuration, keys);
      if (auto [it, fresh] = first_of.emplace(identity, i); !fresh)
        return make_error(ErrorCode::kInvalidArgument,
                          where + ": results " + std::to_string(it->second) + " and " +
                              std::to_string(i) + " hold the same configuration (" + key +
                              "): keep one of them");
      Result<nlohmann::json> record = to_record(result, keys, *scale, *objective, at);
      if (!record) return record.error();
      // A distinct config whose values join to a key already taken: the
      // reader reads each record's own parameters, so any unused key serves.
      if (cache.contains(key)) key = identity;
      cache[key] = std::move(*record);
    }
    nlohmann::json params = nlohmann::json::object();
    for (std::size_t p = 0; p < keys.size(); ++p) params[keys[p]] = parameter_list(seen[p]);
    return nlohmann::json{{"tune_params_keys", keys},
                          {"tune_params", params},
                          {"objective", *objective},
                          {"cache", cache}};
  } catch (const std::exception& e) {
    return make_error(ErrorCode::kInvalidArgument,
                      where + " is a malformed T4 output file: " + e.what());
  }
}

}  // namespace kiln::detail
