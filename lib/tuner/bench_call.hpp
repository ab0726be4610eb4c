// The messages between the tuner and a benchmark worker process
// (kiln/bench_worker.hpp). Once per worker, the call: its arguments copied
// to the host, the expected outputs, the in-place lists, the timing and
// checking options and the device to open. Then per config: the artifact
// and its launch geometry (computed by the tuner: a LaunchRule is a
// std::function and cannot travel); the reply is the Measurement.
//
// Every message is one JSON frame plus one raw frame (tensor bytes,
// reference values, the binary). kBenchWireVersion must be bumped on any
// change to these fields.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "host_args.hpp"
#include "kiln/tuner/tuner.hpp"
#include "measure.hpp"

namespace kiln::internal {

inline constexpr int kBenchWireVersion = 2;

// One message ready to send: shared, unchanged, by every worker of a run.
struct Message {
  nlohmann::json json;
  std::string raw;
};

struct BenchCall {
  HostArgs args;
  std::vector<std::string> outputs, restore_value, reset_to_zero;
  Reference reference;
  // No reference: each measure reply carries the checked run's outputs.
  bool capture_outputs = false;
  TuneOptions options;  // only the timing and checking fields travel
  DeviceRef device;
  int threads = 0;  // CPU: threads that run blocks (0: one per core)

  Message to_message() const;
  // Throws kiln::Error (kCorrupt) naming what is malformed.
  static BenchCall from_message(const nlohmann::json& json, std::string_view raw);
};

Message measure_request(const Artifact& artifact, const LaunchGeometry& geometry);
// Throws kiln::Error (kCorrupt) for a malformed request.
std::pair<Artifact, LaunchGeometry> parse_measure_request(const nlohmann::json& json,
                                                          std::string raw);

// A measure reply: the measurement and, when captured, the outputs.
Message measure_reply(const Measurement& m, const Outputs& outputs);
// Throws kiln::Error (kCorrupt) for a malformed reply.
Measurement parse_measure_reply(const nlohmann::json& json, std::string_view raw, Outputs* outputs);

}  // namespace kiln::internal
