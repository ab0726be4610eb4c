#include "bench_call.hpp"

#include "kiln/core/error.hpp"

namespace kiln::internal {

namespace {

nlohmann::json dim_json(const Dim3& d) {
  return {d.x, d.y, d.z};
}

Dim3 dim_from(const nlohmann::json& j) {
  return Dim3{worker::whole<std::uint32_t>(j.at(0)), worker::whole<std::uint32_t>(j.at(1)),
              worker::whole<std::uint32_t>(j.at(2))};
}

// The fields of TuneOptions that measure() reads; the rest stays with the tuner.
nlohmann::json timing_json(const TuneOptions& o) {
  nlohmann::json j = {
      {"warmup", o.measure.warmup},         {"min_reps", o.measure.min_reps},
      {"max_reps", o.measure.max_reps},     {"target_seconds", o.measure.target_seconds},
      {"cold_l2", o.measure.cold_l2},       {"graphs", o.measure.graphs},
      {"delay_us", o.measure.delay_us},     {"check", o.check.enabled},
      {"early_stop", o.measure.early_stop}, {"early_stop_reps", o.measure.early_stop_reps}};
  if (o.check.tolerance) {
    j["tolerance"] = {{"atol", o.check.tolerance->atol},
                      {"rtol", o.check.tolerance->rtol},
                      {"min_cosine", o.check.tolerance->min_cosine}};
  }
  return j;
}

TuneOptions timing_from(const nlohmann::json& j) {
  TuneOptions o;
  o.measure.warmup = worker::whole<int>(j.at("warmup"));
  o.measure.min_reps = worker::whole<int>(j.at("min_reps"));
  o.measure.max_reps = worker::whole<int>(j.at("max_reps"));
  o.measure.target_seconds = j.at("target_seconds").get<double>();
  o.measure.cold_l2 = j.at("cold_l2").get<bool>();
  o.measure.graphs = j.at("graphs").get<bool>();
  o.measure.delay_us = j.at("delay_us").get<double>();
  o.check.enabled = j.at("check").get<bool>();
  o.measure.early_stop = j.value("early_stop", 0.0);
  o.measure.early_stop_reps = j.value("early_stop_reps", 3);
  if (j.contains("tolerance")) {
    const auto& t = j["tolerance"];
    o.check.tolerance = Tolerance{t.at("atol").get<double>(), t.at("rtol").get<double>(),
                                  t.at("min_cosine").get<double>()};
  }
  return o;
}

}  // namespace

worker::Payload BenchCall::encode() const {
  worker::Payload m;
  nlohmann::json arguments = args.to_json(&m);
  m.fields = {{"args", std::move(arguments)},
              {"outputs", outputs},
              {"restore_value", restore_value},
              {"reset_to_zero", reset_to_zero},
              {"options", timing_json(options)},
              {"device", {{"kind", device.backend}, {"index", device.index}}},
              {"threads", threads},
              {"capture_outputs", capture_outputs}};
  if (reference) {
    nlohmann::json ref = nlohmann::json::object();
    for (const auto& [name, values] : *reference) append_doubles(values, &m.raw, &ref[name]);
    m.fields["reference"] = std::move(ref);
  }
  return m;
}

Result<BenchCall> BenchCall::decode(worker::Payload payload) {
  return worker::decoded("benchmark call", [&]() -> Result<BenchCall> {
    const nlohmann::json& json = payload.fields;
    const std::string_view raw = payload.raw;
    BenchCall c;
    auto arguments = HostArgs::from_json(json.at("args"), payload);
    if (!arguments.ok()) return arguments.error();
    c.args = std::move(*arguments);
    c.outputs = json.at("outputs").get<std::vector<std::string>>();
    c.restore_value = json.at("restore_value").get<std::vector<std::string>>();
    c.reset_to_zero = json.at("reset_to_zero").get<std::vector<std::string>>();
    c.options = timing_from(json.at("options"));
    const auto& d = json.at("device");
    // The worker opens it by its backend's name (kiln/backends/devices.hpp),
    // which says when this build has no such backend.
    c.device.backend = d.at("kind").get<std::string>();
    if (c.device.backend.empty()) {
      return make_error(ErrorCode::kCorrupt, "benchmark call names no device backend");
    }
    c.device.index = worker::whole<int>(d.at("index"));
    c.threads = worker::whole<int>(json.at("threads"));
    c.capture_outputs = json.at("capture_outputs").get<bool>();
    if (json.contains("reference")) {
      c.reference.emplace();
      for (const auto& [name, where] : json["reference"].items()) {
        (*c.reference)[name] = read_doubles(where, raw);
      }
    }
    return c;
  });
}

worker::Payload MeasureRequest::encode() const {
  worker::Payload m;
  m.fields = {{"artifact", artifact.to_json()},
              {"grid", dim_json(geometry.grid)},
              {"block", dim_json(geometry.block)},
              {"shared_bytes", geometry.shared_bytes},
              {"stop_best", stop.best},
              {"stop_screen", stop.screen}};
  if (artifact.binary) m.raw = *artifact.binary;
  return m;
}

Result<MeasureRequest> MeasureRequest::decode(worker::Payload payload) {
  return worker::decoded("measure request", [&]() -> Result<MeasureRequest> {
    const nlohmann::json& json = payload.fields;
    LaunchGeometry g;
    g.grid = dim_from(json.at("grid"));
    g.block = dim_from(json.at("block"));
    g.shared_bytes = worker::whole<std::size_t>(json.at("shared_bytes"));
    return MeasureRequest{Artifact::from_json(json.at("artifact"), std::move(payload.raw)), g,
                          StopBars{json.value("stop_best", 0.0), json.value("stop_screen", false)}};
  });
}

worker::Payload MeasureReply::encode() const {
  worker::Payload reply;
  reply.fields = {{"measurement", measurement.to_json()}};
  if (!outputs.empty()) {
    nlohmann::json where = nlohmann::json::object();
    for (const auto& [name, values] : outputs) append_doubles(values, &reply.raw, &where[name]);
    reply.fields["outputs"] = std::move(where);
  }
  return reply;
}

Result<MeasureReply> MeasureReply::decode(worker::Payload payload) {
  return worker::decoded("measure reply", [&]() -> Result<MeasureReply> {
    const nlohmann::json& json = payload.fields;
    MeasureReply r{Measurement::from_json(json.at("measurement")), {}};
    if (json.contains("outputs")) {
      for (const auto& [name, where] : json["outputs"].items()) {
        r.outputs[name] = read_doubles(where, payload.raw);
      }
    }
    return r;
  });
}

}  // namespace kiln::internal
