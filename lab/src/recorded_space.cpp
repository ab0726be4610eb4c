// read_recorded_space: Kernel Tuner's cache file layout (or its T4 output
// layout, through recorded_t4.cpp, or KTT's, through recorded_ktt.cpp) into a
// RecordedSpace.
#include "kiln/lab/recorded_space.hpp"

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

const replay::ReplayRecord* RecordedSource::find(const std::string& key) const {
  if (!recorded_.index) return nullptr;
  auto it = recorded_.index->find(key);
  return it == recorded_.index->end() ? nullptr : &recorded_.configs[it->second];
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

namespace {

// The file as Kernel Tuner's cache layout: a cache file (closed as Kernel
// Tuner's own reader closes one left open), or T4 or KTT output converted.
Result<nlohmann::json> cache_layout_of(std::string_view text, const std::string& where) {
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
  if (detail::is_t4_output(j)) return detail::t4_as_cache_layout(text, where);
  if (detail::is_ktt_output(j)) return detail::ktt_as_cache_layout(text, where);
  return j;
}

// What the reader needs of the cache layout, each a field of the right type.
Status check_layout(const nlohmann::json& j, const std::string& where) {
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
  return ok_status();
}

// A label only: one that is not a string is shown as its JSON.
std::string label(const nlohmann::json& j, const char* field, const char* fallback) {
  const auto it = j.find(field);
  if (it == j.end() || it->is_null()) return std::string(fallback);
  std::string shown = it->is_string() ? it->get<std::string>() : it->dump();
  return shown.empty() ? std::string(fallback) : shown;
}

// The parameters in tune_params_keys order, each with its distinct values.
struct ParamLists {
  std::vector<std::string> names;
  std::vector<std::vector<Value>> lists;  // each parameter's values, as in `names`
  std::vector<bool> as_text;              // each parameter's numbers_as_text

  // Where `c` stands along each list: the space's odometer position.
  std::vector<std::size_t> position(const Config& c) const {
    std::vector<std::size_t> at;
    for (std::size_t p = 0; p < names.size(); ++p)
      at.push_back(static_cast<std::size_t>(
          std::find(lists[p].begin(), lists[p].end(), c.at(names[p])) - lists[p].begin()));
    return at;
  }
};

Result<ParamLists> read_param_lists(const nlohmann::json& j, const std::string& where) {
  ParamLists out;
  try {
    for (const auto& name : j["tune_params_keys"]) {
      out.names.push_back(name.get<std::string>());
      std::vector<Value> values;
      const nlohmann::json& list = j["tune_params"].at(out.names.back());
      out.as_text.push_back(numbers_as_text(list));
      for (const auto& v : list) {
        Value value = to_value(v, out.as_text.back());
        if (std::find(values.begin(), values.end(), value) == values.end()) values.push_back(value);
      }
      out.lists.push_back(std::move(values));
    }
  } catch (const std::exception& e) {
    return make_error(ErrorCode::kInvalidArgument, where + ": bad parameter list: " + e.what());
  }
  if (out.names.empty())
    return make_error(ErrorCode::kInvalidArgument,
                      where + ": \"tune_params_keys\" names no parameter: a space needs one");
  return out;
}

// The record's config, each value among its parameter's list.
Result<Config> record_config(const std::string& key, const nlohmann::json& record,
                             const ParamLists& params, const nlohmann::json& tune_params,
                             const std::string& where) {
  Config config;
  for (std::size_t p = 0; p < params.names.size(); ++p) {
    const std::string& name = params.names[p];
    if (!record.is_object() || !record.contains(name))
      return make_error(ErrorCode::kInvalidArgument,
                        where + ": the record \"" + key + "\" has no parameter " + name);
    Value value = to_value(record[name], params.as_text[p]);
    // A value outside the parameter's list is a config no search can
    // propose: were it the fastest, every replay would report a fraction
    // of an optimum it cannot reach.
    const std::vector<Value>& list = params.lists[p];
    if (std::find(list.begin(), list.end(), value) == list.end())
      return make_error(ErrorCode::kInvalidArgument,
                        where + ": the record \"" + key + "\" has " + name + "=" +
                            record[name].dump() + ", not among tune_params' values " +
                            tune_params[name].dump() + ": add it there or remove the record");
    config.set(name, std::move(value));
  }
  return config;
}

// One record: its config, its time or why it failed, its costs. Throws
// what nlohmann throws on a field of the wrong type.
Result<RecordedConfig> read_record(const std::string& key, const nlohmann::json& record,
                                   const ParamLists& params, const nlohmann::json& tune_params,
                                   const detail::Objective& objective, const std::string& where) {
  RecordedConfig rc;
  Result<Config> config = record_config(key, record, params, tune_params, where);
  if (!config) return config.error();
  rc.config = std::move(*config);
  const nlohmann::json& time = record.at("time");
  if (!time.is_number()) {
    rc.failure = time.is_string() ? time.get<std::string>() : time.dump();
  } else if (std::optional<std::string> why = not_a_run_time(time.get<double>())) {
    rc.failure = *why;
  } else {
    rc.run_ms = time.get<double>();
    std::variant<double, std::string> figure =
        objective.name == "time" ? rc.run_ms : detail::objective_figure(record, objective);
    if (const double* v = std::get_if<double>(&figure)) {
      rc.objective = *v;
      rc.time_ms = rc.run_ms;  // rank_by_objective scales it for another objective
    } else {
      rc.failure = std::get<std::string>(figure);
    }
  }
  rc.compile_ms = cost(record, "compile_time");
  rc.benchmark_ms = cost(record, "benchmark_time");
  return rc;
}

// Every record of the cache into out.configs and `index`, in file order.
Status read_records(const nlohmann::json& j, const ParamLists& params,
                    const detail::Objective& objective, const std::string& where,
                    RecordedSpace& out, std::unordered_map<std::string, std::size_t>& index) {
  std::vector<std::string> record_keys;  // as out.configs, for the duplicate error
  bool any_worked = false;
  for (const auto& [key, record] : j["cache"].items()) {
    Result<RecordedConfig> rc = make_error(ErrorCode::kInternal, "unread");
    try {
      rc = read_record(key, record, params, j["tune_params"], objective, where);
    } catch (const std::exception& e) {
      return make_error(ErrorCode::kInvalidArgument,
                        where + ": the record \"" + key + "\" is malformed: " + e.what());
    }
    if (!rc) return rc.error();
    any_worked = any_worked || rc->time_ms.has_value();
    // Two records of one config: only the first could be found, and the
    // second's time could be an optimum no replay reaches.
    auto [at, fresh] = index.emplace(rc->config.key(), out.configs.size());
    if (!fresh)
      return make_error(ErrorCode::kInvalidArgument,
                        where + ": the records \"" + record_keys[at->second] + "\" and \"" + key +
                            "\" hold the same config (" + rc->config.to_string() +
                            "): keep one of them");
    record_keys.push_back(key);
    out.configs.push_back(std::move(*rc));
  }
  if (out.configs.empty())
    return make_error(ErrorCode::kInvalidArgument, where + " holds no configs");
  if (!any_worked) return make_error(ErrorCode::kInvalidArgument, where + ": every config failed");
  return ok_status();
}

// The space's lists hold the values some record takes. A value that a
// restriction left no record of is no config a search can propose, yet it
// would count in the search's encoding (a position along its list), and
// the same run's T4 output file, which lists no such value, would replay
// differently (some of Kernel Tuner's convolution files list a block width
// of 1 that no config takes).
Status keep_taken_values(ParamLists& params, RecordedSpace& out, const std::string& where) {
  for (std::size_t p = 0; p < params.names.size(); ++p) {
    std::vector<Value>& list = params.lists[p];
    std::vector<bool> taken(list.size(), false);
    for (const RecordedConfig& rc : out.configs)
      taken[static_cast<std::size_t>(
          std::find(list.begin(), list.end(), rc.config.at(params.names[p])) - list.begin())] =
          true;
    std::vector<Value> kept;
    for (std::size_t v = 0; v < list.size(); ++v)
      if (taken[v]) kept.push_back(list[v]);
    list = std::move(kept);
    try {
      out.space.param(params.names[p], list);
    } catch (const std::exception& e) {
      return make_error(ErrorCode::kInvalidArgument, where + ": bad parameter list: " + e.what());
    }
  }
  return ok_status();
}

// The default is the first record in the space's odometer order, found
// from the records: a search of a sparse recorded space would otherwise
// scan the product of its parameter lists for it.
void set_default(const ParamLists& params, RecordedSpace& out) {
  const RecordedConfig* first = &out.configs.front();
  std::vector<std::size_t> first_at = params.position(first->config);
  for (const RecordedConfig& rc : out.configs)
    if (std::vector<std::size_t> at = params.position(rc.config); at < first_at) {
      first = &rc;
      first_at = std::move(at);
    }
  out.space.default_config(first->config);
}

}  // namespace

Result<RecordedSpace> parse_recorded_space(std::string_view text,
                                           const std::filesystem::path& path) {
  const std::string where = "recorded space " + path.string();
  Result<nlohmann::json> layout = cache_layout_of(text, where);
  if (!layout) return layout.error();
  const nlohmann::json& j = *layout;
  if (Status st = check_layout(j, where); !st.ok()) return st.error();
  Result<detail::Objective> objective = detail::read_objective(j, where);
  if (!objective) return objective.error();
  RecordedSpace out;
  out.path = path;
  out.objective = objective->name;
  out.higher_is_better = objective->higher_is_better;
  out.device = label(j, "device_name", "an unnamed device");
  out.kernel = label(j, "kernel_name", "unknown kernel");
  Result<ParamLists> params = read_param_lists(j, where);
  if (!params) return params.error();
  auto index = std::make_shared<std::unordered_map<std::string, std::size_t>>();
  if (Status st = read_records(j, *params, *objective, where, out, *index); !st.ok())
    return st.error();
  if (Status st = keep_taken_values(*params, out, where); !st.ok()) return st.error();
  detail::rank_by_objective(out);
  out.index = index;
  out.space.constraint("recorded", [index](const Config& c) { return index->count(c.key()) > 0; });
  set_default(*params, out);
  return out;
}

bool recorded_zip_supported() {
  return detail::zip_supported();
}

}  // namespace kiln
