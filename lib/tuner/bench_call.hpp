// The messages between the tuner and a benchmark worker process
// (include/kiln/tuner/bench_worker.hpp). Once per worker, the call: its arguments copied
// to the host, the expected outputs, the in-place lists, the timing and
// checking options and the device to open. Then per config: the artifact
// and its launch geometry (computed by the tuner: a LaunchRule is a
// std::function and cannot travel); the reply is the Measurement.
//
// Each is an operation of the one worker protocol (process/worker_protocol.hpp):
// fields plus raw bytes (reference values, the binary) plus, for the call,
// the descriptor of the shared memory holding the arguments' bytes
// (host_args.hpp).
// worker::kWireVersion must be bumped on any change to these fields.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "host_args.hpp"
#include "kiln/process/worker_protocol.hpp"
#include "kiln/tuner/tuner.hpp"
#include "measure.hpp"

namespace kiln::internal {

// One message ready to send: shared, unchanged, by every worker of a run.
using Message = worker::Payload;

// kCall: what every worker of a run gets first.
struct BenchCall {
  static constexpr worker::Op kOp = "call";

  HostArgs args;
  std::vector<std::string> outputs, restore_value, reset_to_zero;
  Reference reference;
  // No reference: each measure reply carries the checked run's outputs.
  bool capture_outputs = false;
  TuneOptions options;  // only the timing and checking fields travel
  DeviceRef device;
  int threads = 0;  // CPU: threads that run blocks (0: one per core)

  [[nodiscard]] worker::Payload encode() const;
  [[nodiscard]] Message to_message() const { return encode(); }
  // kCorrupt naming what is malformed.
  [[nodiscard]] static Result<BenchCall> decode(worker::Payload payload);
};

// kMeasure: one config of the current call; the answer is a MeasureReply.
struct MeasureRequest {
  static constexpr worker::Op kOp = "measure";
  Artifact artifact;
  LaunchGeometry geometry;
  StopBars stop;  // early stop (MeasureInputs)
  [[nodiscard]] worker::Payload encode() const;
  [[nodiscard]] static Result<MeasureRequest> decode(worker::Payload payload);
};

// The measurement and, when the call asked for them, the checked run's outputs.
struct MeasureReply {
  Measurement measurement;
  Outputs outputs;
  [[nodiscard]] worker::Payload encode() const;
  [[nodiscard]] static Result<MeasureReply> decode(worker::Payload payload);
};

// kRelease: the worker drops the current call (goes idle).
struct ReleaseRequest {
  static constexpr worker::Op kOp = "release";
  [[nodiscard]] worker::Payload encode() const { return {}; }
  [[nodiscard]] static Result<ReleaseRequest> decode(const worker::Payload&) {
    return ReleaseRequest{};
  }
};

}  // namespace kiln::internal
