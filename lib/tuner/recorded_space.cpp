// read_recorded_space: Kernel Tuner's cache file layout (or its T4 output
// layout, through recorded_t4.cpp, or KTT's, through recorded_ktt.cpp) into a
// RecordedSpace.
#include "kiln/tuner/recorded_space.hpp"

#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <climits>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <variant>

#include "kiln/tuner/measurement.hpp"
#include "recorded_ktt.hpp"
#include "recorded_objective.hpp"
#include "recorded_open_cache.hpp"
#include "recorded_t4.hpp"
#include "recorded_zip.hpp"

namespace kiln {
namespace {

constexpr double kKernelTunerErrorValue = 1e20;

// The whole file, gunzipped when it is gzip'd (gzread passes plain files through).
Result<std::string> read_maybe_gzipped(const std::filesystem::path& path) {
  gzFile file = gzopen(path.c_str(), "rb");
  if (!file) return make_error(ErrorCode::kNotFound, "cannot open recorded space " + path.string());
  std::string out;
  char buffer[1 << 16];
  int n = 0;
  while ((n = gzread(file, buffer, sizeof buffer)) > 0) {
    out.append(buffer, static_cast<std::size_t>(n));
    if (out.size() > (std::size_t{1} << 31)) {
      gzclose(file);
      return make_error(ErrorCode::kInvalidArgument,
                        "recorded space " + path.string() + " is over 2 GiB uncompressed");
    }
  }
  // NOTES: a gzip stream cut short ends like a whole one, gzread returning
  // 0, and only gzerror says Z_BUF_ERROR: without this check a truncated
  // download reads as a smaller space, and every replay of it is wrong.
  int err = Z_OK;
  const std::string why = gzerror(file, &err);
  gzclose(file);
  if (n < 0 || err != Z_OK)
    return make_error(ErrorCode::kCorrupt,
                      "recorded space " + path.string() + " is truncated or corrupt (zlib: " + why +
                          ", after " + std::to_string(out.size()) +
                          " bytes uncompressed): download it again, or check it with "
                          "`gunzip -t`");
  return out;
}

// A JSON number as an int64 when it is a whole number within range (a
// float at or past 2^63 would be undefined to cast, an unsigned past
// INT64_MAX would wrap).
std::optional<std::int64_t> whole(const nlohmann::json& v) {
  if (v.is_number_unsigned())
    return v.get<std::uint64_t>() <= static_cast<std::uint64_t>(INT64_MAX)
               ? std::optional<std::int64_t>(v.get<std::int64_t>())
               : std::nullopt;
  if (v.is_number_integer()) return v.get<std::int64_t>();
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (std::abs(d) < 9.2e18 && d == std::trunc(d)) return static_cast<std::int64_t>(d);
  }
  return std::nullopt;
}

// Kiln values hold integers, booleans and text, not floats: a parameter
// list with a number that is no integer (0.5, 1e30) holds all its numbers
// as text, so [1.0, 2.5] is one type ("1.0", "2.5") rather than an integer
// beside a string.
bool numbers_as_text(const nlohmann::json& list) {
  for (const auto& v : list)
    if (v.is_number() && !whole(v)) return true;
  return false;
}

// A Kernel Tuner parameter value as a Kiln value: integers stay integers
// (a float that is a whole number too), booleans booleans, strings strings;
// numbers of a text parameter their shortest text as a double, so 1 and
// 1.0 are the same value.
Value to_value(const nlohmann::json& v, bool as_text) {
  if (v.is_boolean()) return v.get<bool>();
  if (v.is_number()) {
    if (std::optional<std::int64_t> i = whole(v); i && !as_text) return *i;
    return nlohmann::json(v.get<double>()).dump();
  }
  if (v.is_string()) return v.get<std::string>();
  return v.dump();
}

// Why a recorded time is no measurement, if it is not: Kernel Tuner before
// its named failures (InvalidConfig, CompilationFailedConfig, ...) wrote
// 1e20 for a config that failed, and files in the field still carry it; a
// time of zero or less would become an optimum nothing can approach.
std::optional<std::string> not_a_run_time(double ms) {
  if (ms >= kKernelTunerErrorValue)
    return "time " + nlohmann::json(ms).dump() + " (Kernel Tuner's mark of a failed config)";
  if (!(ms > 0)) return "time " + nlohmann::json(ms).dump() + " is not a positive duration";
  return std::nullopt;
}

// A record's compile or benchmark cost in ms: absent is 0 (older files lack
// them); anything but a non-negative number throws, so the record is named
// as malformed rather than run the virtual clock backwards.
double cost(const nlohmann::json& record, const char* field) {
  // nlohmann's own error for a string here names neither the field nor the value.
  if (record.contains(field) && !record[field].is_number())
    throw std::invalid_argument(std::string(field) + " " + record[field].dump() +
                                " is not a duration: give a number of ms or remove it");
  const double ms = record.value(field, 0.0);
  if (!(ms >= 0) || !std::isfinite(ms))
    throw std::invalid_argument(std::string(field) + " " + nlohmann::json(ms).dump() +
                                " is not a non-negative duration");
  return ms;
}

// Why `text` is no JSON, in the parser's words (which name the byte and
// the token), with the two usual causes named: NaN and Infinity, which
// Python's json.dumps writes for a failed time, and a missing comma.
std::string parse_failure(std::string_view text) {
  try {
    // Parsed for its exception alone; GCC's warn_unused_result ignores a
    // cast to void, so the value is named.
    [[maybe_unused]] const nlohmann::json parsed = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    std::string why = "the parser stopped at byte " + std::to_string(e.byte) + ": " + e.what();
    // e.byte is 1-based: the byte the parser was reading when it stopped.
    const std::size_t at = e.byte > 0 ? std::min<std::size_t>(e.byte - 1, text.size()) : 0;
    std::size_t token = at;  // back to the start of the token it stopped in
    while (token > 0 && std::isalpha(static_cast<unsigned char>(text[token - 1]))) --token;
    const std::string_view rest = text.substr(token);
    if (rest.starts_with("NaN") || rest.starts_with("Infinity"))
      why +=
          " (NaN and Infinity, which Python's json.dumps writes, are not JSON: write the "
          "time as a failure string or null instead)";
    else if (why.find("unexpected end of input") == std::string::npos &&
             (why.find("; expected '}'") != std::string::npos ||
              why.find("; expected ']'") != std::string::npos))
      why += " (a comma missing before it?)";
    return why;
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

}  // namespace

const RecordedConfig* RecordedSpace::find(const Config& config) const {
  if (!index) return nullptr;
  auto it = index->find(config.key());
  return it == index->end() ? nullptr : &configs[it->second];
}

std::vector<Config> RecordedSpace::listed() const {
  std::vector<Config> out;
  out.reserve(configs.size());
  for (const RecordedConfig& r : configs) out.push_back(r.config);
  return out;
}

Result<RecordedSpace> read_recorded_space(const std::filesystem::path& path) {
  Result<std::string> text = read_maybe_gzipped(path);
  if (!text) return text.error();
  if (detail::looks_like_zip(*text)) {
    Result<std::string> member = detail::zip_single_member(*text, path);
    if (!member) return member.error();
    return parse_recorded_space(*member, path);
  }
  return parse_recorded_space(*text, path);
}

Result<RecordedSpace> parse_recorded_space(std::string_view text,
                                           const std::filesystem::path& path) {
  const std::string where = "recorded space " + path.string();
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  // Kernel Tuner leaves its cache file open while it tunes (and for good,
  // when the run is killed): closed as its own reader closes it.
  if (j.is_discarded())
    for (const std::string& closed : detail::closed_cache_texts(text))
      if (j = nlohmann::json::parse(closed, nullptr, false); !j.is_discarded()) break;
  if (j.is_discarded() || !j.is_object()) {
    // The file's own parse error, not a closed candidate's: the candidates
    // are guesses at a file left open, and their errors point past its end.
    const std::string why = j.is_discarded() ? ": " + parse_failure(text)
                                             : ": it holds a JSON " + std::string(j.type_name());
    return make_error(ErrorCode::kInvalidArgument,
                      where +
                          " is not a JSON object (a Kernel Tuner cache file, closed or left "
                          "open by a tuning run, its T4 output file, a KTT output file or "
                          "`kiln cache export --format kernel-tuner` output)" +
                          why);
  }
  if (detail::is_t4_output(j)) {
    Result<nlohmann::json> cache_layout = detail::t4_as_cache_layout(text, where);
    if (!cache_layout) return cache_layout.error();
    j = std::move(*cache_layout);
  } else if (detail::is_ktt_output(j)) {
    Result<nlohmann::json> cache_layout = detail::ktt_as_cache_layout(text, where);
    if (!cache_layout) return cache_layout.error();
    j = std::move(*cache_layout);
  }
  // A field there with the wrong type is named as such: "lacks" it misled.
  auto wrong_type = [&](const char* field, const char* want) {
    return make_error(ErrorCode::kInvalidArgument, where + ": its \"" + field + "\" is a JSON " +
                                                       j[field].type_name() + ", not " + want);
  };
  if (j.contains("cache") && !j["cache"].is_object())
    return wrong_type("cache", "an object of records (a Kernel Tuner cache file)");
  if (!j.contains("cache") && j.contains("results") && !j["results"].is_array())
    return wrong_type("results", "a list (a T4 output file)");
  if (!j.contains("tune_params_keys") || !j.contains("tune_params") || !j.contains("cache"))
    return make_error(ErrorCode::kInvalidArgument,
                      where +
                          " lacks \"tune_params_keys\", \"tune_params\" or \"cache\" (a "
                          "Kernel Tuner cache file), \"results\" (its T4 output file) and "
                          "\"Metadata\" with \"Results\" (a KTT output file)");
  Result<detail::Objective> objective = detail::read_objective(j, where);
  if (!objective) return objective.error();
  RecordedSpace out;
  out.path = path;
  out.objective = objective->name;
  out.higher_is_better = objective->higher_is_better;
  // Labels only: one that is not a string is shown as its JSON.
  auto label = [&](const char* field, const char* fallback) {
    const auto it = j.find(field);
    if (it == j.end() || it->is_null()) return std::string(fallback);
    std::string shown = it->is_string() ? it->get<std::string>() : it->dump();
    return shown.empty() ? std::string(fallback) : shown;
  };
  out.device = label("device_name", "an unnamed device");
  out.kernel = label("kernel_name", "unknown kernel");
  std::vector<std::string> names;
  std::vector<std::vector<Value>> lists;  // each parameter's values, as in `names`
  std::vector<bool> as_text;              // each parameter's numbers_as_text
  try {
    for (const auto& name : j["tune_params_keys"]) {
      names.push_back(name.get<std::string>());
      std::vector<Value> values;
      const nlohmann::json& list = j["tune_params"].at(names.back());
      as_text.push_back(numbers_as_text(list));
      for (const auto& v : list) {
        Value value = to_value(v, as_text.back());
        if (std::find(values.begin(), values.end(), value) == values.end()) values.push_back(value);
      }
      lists.push_back(std::move(values));
    }
  } catch (const std::exception& e) {
    return make_error(ErrorCode::kInvalidArgument, where + ": bad parameter list: " + e.what());
  }
  if (names.empty())
    return make_error(ErrorCode::kInvalidArgument,
                      where + ": \"tune_params_keys\" names no parameter: a space needs one");
  auto index = std::make_shared<std::unordered_map<std::string, std::size_t>>();
  std::vector<std::string> record_keys;  // as out.configs, for the duplicate error
  bool any_worked = false;
  for (const auto& [key, record] : j["cache"].items()) {
    RecordedConfig rc;
    try {
      for (std::size_t p = 0; p < names.size(); ++p) {
        const std::string& name = names[p];
        if (!record.is_object() || !record.contains(name))
          return make_error(ErrorCode::kInvalidArgument,
                            where + ": the record \"" + key + "\" has no parameter " + name);
        Value value = to_value(record[name], as_text[p]);
        // A value outside the parameter's list is a config no search can
        // propose: were it the fastest, every replay would report a fraction
        // of an optimum it cannot reach.
        if (std::find(lists[p].begin(), lists[p].end(), value) == lists[p].end())
          return make_error(ErrorCode::kInvalidArgument,
                            where + ": the record \"" + key + "\" has " + name + "=" +
                                record[name].dump() + ", not among tune_params' values " +
                                j["tune_params"][name].dump() +
                                ": add it there or remove the record");
        rc.config.set(name, std::move(value));
      }
      const nlohmann::json& time = record.at("time");
      if (!time.is_number()) {
        rc.failure = time.is_string() ? time.get<std::string>() : time.dump();
      } else if (std::optional<std::string> why = not_a_run_time(time.get<double>())) {
        rc.failure = *why;
      } else {
        rc.run_ms = time.get<double>();
        std::variant<double, std::string> figure =
            objective->name == "time" ? rc.run_ms : detail::objective_figure(record, *objective);
        if (const double* v = std::get_if<double>(&figure)) {
          rc.objective = *v;
          rc.time_ms = rc.run_ms;  // rank_by_objective scales it for another objective
          any_worked = true;
        } else {
          rc.failure = std::get<std::string>(figure);
        }
      }
      rc.compile_ms = cost(record, "compile_time");
      rc.benchmark_ms = cost(record, "benchmark_time");
    } catch (const std::exception& e) {
      return make_error(ErrorCode::kInvalidArgument,
                        where + ": the record \"" + key + "\" is malformed: " + e.what());
    }
    // Two records of one config: only the first could be found, and the
    // second's time could be an optimum no replay reaches.
    auto [at, fresh] = index->emplace(rc.config.key(), out.configs.size());
    if (!fresh)
      return make_error(ErrorCode::kInvalidArgument,
                        where + ": the records \"" + record_keys[at->second] + "\" and \"" + key +
                            "\" hold the same config (" + rc.config.to_string() +
                            "): keep one of them");
    record_keys.push_back(key);
    out.configs.push_back(std::move(rc));
  }
  if (out.configs.empty())
    return make_error(ErrorCode::kInvalidArgument, where + " holds no configs");
  if (!any_worked) return make_error(ErrorCode::kInvalidArgument, where + ": every config failed");
  // The space's lists hold the values some record takes. A value that a
  // restriction left no record of is no config a search can propose, yet
  // it would count in the search's encoding (a position along its list),
  // and the same run's T4 output file, which lists no such value, would
  // replay differently (some of Kernel Tuner's convolution files list a
  // block width of 1 that no config takes).
  for (std::size_t p = 0; p < names.size(); ++p) {
    std::vector<bool> taken(lists[p].size(), false);
    for (const RecordedConfig& rc : out.configs)
      taken[static_cast<std::size_t>(
          std::find(lists[p].begin(), lists[p].end(), rc.config.at(names[p])) - lists[p].begin())] =
          true;
    std::vector<Value> kept;
    for (std::size_t v = 0; v < lists[p].size(); ++v)
      if (taken[v]) kept.push_back(lists[p][v]);
    lists[p] = std::move(kept);
    try {
      out.space.param(names[p], lists[p]);
    } catch (const std::exception& e) {
      return make_error(ErrorCode::kInvalidArgument, where + ": bad parameter list: " + e.what());
    }
  }
  detail::rank_by_objective(out);
  out.index = index;
  out.space.constraint("recorded", [index](const Config& c) { return index->count(c.key()) > 0; });
  // The default is the first record in the space's odometer order, found
  // from the records: a search of a sparse recorded space would otherwise
  // scan the product of its parameter lists for it.
  auto position = [&](const Config& c) {
    std::vector<std::size_t> at;
    for (std::size_t p = 0; p < names.size(); ++p)
      at.push_back(static_cast<std::size_t>(
          std::find(lists[p].begin(), lists[p].end(), c.at(names[p])) - lists[p].begin()));
    return at;
  };
  const RecordedConfig* first = &out.configs.front();
  std::vector<std::size_t> first_at = position(first->config);
  for (const RecordedConfig& rc : out.configs)
    if (std::vector<std::size_t> at = position(rc.config); at < first_at) {
      first = &rc;
      first_at = std::move(at);
    }
  out.space.default_config(first->config);
  return out;
}

bool recorded_zip_supported() {
  return detail::zip_supported();
}

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
