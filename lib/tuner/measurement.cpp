#include "kiln/tuner/measurement.hpp"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <numeric>

#include "kiln/core/error.hpp"
#include "kiln/process/worker_protocol.hpp"

namespace kiln {

namespace {
constexpr const char* kOutcomeNames[] = {
    "ok",      "compile_failed", "load_failed", "launch_failed", "wrong_result",
    "timeout", "crashed",        "pruned",      "cancelled"};

// Linear interpolation between order statistics (numpy's default).
double quantile(const std::vector<double>& sorted, double q) {
  double pos = q * static_cast<double>(sorted.size() - 1);
  auto lo = static_cast<std::size_t>(std::floor(pos));
  std::size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - static_cast<double>(lo));
}
}  // namespace

const char* outcome_name(Outcome outcome) {
  return kOutcomeNames[static_cast<int>(outcome)];
}

Outcome parse_outcome(std::string_view name) {
  for (int i = 0; i < static_cast<int>(std::size(kOutcomeNames)); ++i) {
    if (name == kOutcomeNames[i]) return static_cast<Outcome>(i);
  }
  throw Error(ErrorCode::kInvalidArgument, "unknown outcome '" + std::string(name) + "'");
}

TimingStats TimingStats::from_samples(std::vector<double> seconds) {
  if (seconds.empty()) {
    throw Error(ErrorCode::kInvalidArgument, "timing statistics need at least one sample");
  }
  for (double s : seconds) {
    if (!std::isfinite(s) || s < 0) {
      throw Error(
          ErrorCode::kInvalidArgument,
          "timing sample " + std::to_string(s) + " is negative or not finite: the timer is broken");
    }
  }
  std::sort(seconds.begin(), seconds.end());
  TimingStats t;
  t.reps = seconds.size();
  t.min = seconds.front();
  t.max = seconds.back();
  t.median = quantile(seconds, 0.5);
  t.p20 = quantile(seconds, 0.2);
  t.p80 = quantile(seconds, 0.8);
  t.mean = std::accumulate(seconds.begin(), seconds.end(), 0.0) / static_cast<double>(t.reps);
  t.spread = t.median > 0 ? (t.p80 - t.p20) / t.median : 0;
  return t;
}

nlohmann::json TimingStats::to_json() const {
  return {{"reps", reps}, {"min", min}, {"median", median}, {"mean", mean},
          {"max", max},   {"p20", p20}, {"p80", p80},       {"spread", spread}};
}

TimingStats TimingStats::from_json(const nlohmann::json& json) {
  TimingStats t;
  try {
    t.reps = worker::whole<std::size_t>(json.at("reps"));
    t.min = json.at("min").get<double>();
    t.median = json.at("median").get<double>();
    t.mean = json.at("mean").get<double>();
    t.max = json.at("max").get<double>();
    t.p20 = json.at("p20").get<double>();
    t.p80 = json.at("p80").get<double>();
    t.spread = json.at("spread").get<double>();
  } catch (const nlohmann::json::exception& e) {
    throw Error(ErrorCode::kInvalidArgument, std::string("timing statistics JSON: ") + e.what());
  } catch (const std::out_of_range& e) {  // worker::whole's: a float or negative count
    throw Error(ErrorCode::kInvalidArgument, std::string("timing statistics JSON: ") + e.what());
  }
  return t;
}

ErrorCode outcome_error_code(Outcome outcome) {
  switch (outcome) {
    case Outcome::kCompileFailed:
      return ErrorCode::kCompileFailed;
    case Outcome::kTimeout:
      return ErrorCode::kTimeout;
    case Outcome::kPruned:
    case Outcome::kCancelled:
      return ErrorCode::kCancelled;
    case Outcome::kWrongResult:
      return ErrorCode::kInvalidArgument;
    case Outcome::kOk:
    case Outcome::kLoadFailed:
    case Outcome::kLaunchFailed:
    case Outcome::kCrashed:
      break;
  }
  return ErrorCode::kLaunchFailed;
}

std::string Measurement::reason() const {
  return ok() ? std::string() : error.describe();
}

namespace {

ErrorCode parse_error_code(const std::string& name, ErrorCode otherwise) {
  for (int c = 0; c <= static_cast<int>(ErrorCode::kInternal); ++c) {
    if (name == error_code_name(static_cast<ErrorCode>(c))) return static_cast<ErrorCode>(c);
  }
  return otherwise;
}

}  // namespace

nlohmann::json Measurement::to_json() const {
  nlohmann::json j = {{"config", config.to_json()},
                      {"outcome", outcome_name(outcome)},
                      {"compile_seconds", compile_seconds}};
  if (group_size != 1) j["group_size"] = group_size;
  if (benchmark_seconds > 0) j["benchmark_seconds"] = benchmark_seconds;
  if (ok())
    j["stats"] = stats.to_json();
  else
    j["reason"] = reason();
  if (!ok()) {
    j["error"] = {{"code", error_code_name(error.code)},
                  {"message", error.message},
                  {"details", error.details}};
  }
  return j;
}

Measurement Measurement::from_json(const nlohmann::json& json) {
  if (!json.is_object() || !json.contains("config") || !json.contains("outcome") ||
      !json["outcome"].is_string()) {
    throw Error(ErrorCode::kInvalidArgument, "measurement JSON needs \"config\" and \"outcome\"");
  }
  Measurement m;
  m.config = Config::from_json(json["config"]);
  m.outcome = parse_outcome(json["outcome"].get<std::string>());
  m.compile_seconds = json.value("compile_seconds", 0.0);
  if (json.contains("group_size")) m.group_size = worker::whole<std::size_t>(json["group_size"]);
  m.benchmark_seconds = json.value("benchmark_seconds", 0.0);
  if (m.ok())
    m.stats = TimingStats::from_json(json.at("stats"));
  else if (json.contains("error") && json["error"].is_object()) {
    const auto& e = json["error"];
    m.error.code = parse_error_code(e.value("code", ""), outcome_error_code(m.outcome));
    m.error.message = e.value("message", "");
    if (e.contains("details") && e["details"].is_object()) {
      m.error.details = e["details"].get<std::map<std::string, std::string>>();
    }
  } else {
    m.error = make_error(outcome_error_code(m.outcome), json.value("reason", ""));
  }
  return m;
}

}  // namespace kiln
