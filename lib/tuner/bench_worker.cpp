// The benchmark worker's side of kiln/bench_worker.hpp (where the tuner
// finds the worker: worker_find.cpp).
#include "tuner/bench_worker.hpp"

#include <unistd.h>

#include <optional>

#include "bench_call.hpp"
#include "call_state.hpp"
#include "core/worker_process.hpp"
#include "measure.hpp"

namespace kiln {

namespace {

using internal::BenchCall;

// Everything one call needs on the worker's device, set up once.
struct WorkerCall {
  BenchCall call;
  internal::ReplicaArgs replica;
  std::optional<internal::CallState> state;
};

nlohmann::json error_json(const ErrorInfo& e) {
  return {{"ok", false}, {"error", e.describe()}};
}

}  // namespace

int serve_bench_worker(int fd, const WorkerDeviceOpener& open) {
  std::unique_ptr<Device> device;
  std::optional<WorkerCall> current;
  for (;;) {
    nlohmann::json request;
    std::string raw;
    if (!wire::receive(fd, &request, &raw)) return 0;  // the tuner closed: done
    const std::string op = request.value("op", std::string());
    nlohmann::json reply;
    bool unusable = false;
    try {
      if (op == "hello") {
        reply = {{"ok", true}, {"wire", internal::kBenchWireVersion}, {"pid", ::getpid()}};
      } else if (op == "call") {
        WorkerCall wc{BenchCall::from_message(request, raw), {}, std::nullopt};
        if (!device) {
          auto opened = open(wc.call.device, wc.call.threads);
          if (!opened.ok()) {
            wire::send(fd, error_json(opened.error()));
            continue;
          }
          device = std::move(*opened);
        }
        auto replica = internal::replicate(*device, wc.call.args);
        if (!replica.ok()) {
          wire::send(fd, error_json(replica.error()));
          continue;
        }
        wc.replica = std::move(*replica);
        // The replica holds the bytes the restore_value arguments had before
        // anything ran, so capturing here snapshots what the tuner snapshotted.
        TunableKernel lists;
        lists.outputs = wc.call.outputs;
        lists.restore_value = wc.call.restore_value;
        lists.reset_to_zero = wc.call.reset_to_zero;
        auto state = internal::CallState::capture(*device, lists, wc.replica.args);
        if (!state.ok()) {
          wire::send(fd, error_json(state.error()));
          continue;
        }
        current = std::move(wc);
        current->state = std::move(*state);
        current->state->rebind(&current->replica.args);
        reply = {{"ok", true}, {"device", device->properties().name}};
      } else if (op == "release") {
        current.reset();  // an idle worker keeps no copy of the last call's tensors
        reply = {{"ok", true}};
      } else if (op == "measure" && current && device) {
        auto [artifact, geometry] = internal::parse_measure_request(request, std::move(raw));
        internal::Outputs captured;
        internal::MeasureInputs in{&current->replica.args, &*current->state,
                                   &current->call.reference, &current->call.options,
                                   current->call.capture_outputs ? &captured : nullptr};
        Measurement m = internal::measure(*device, artifact, geometry, in);
        if (!m.ok() && m.outcome != Outcome::kWrongResult) {
          // A fault that poisons the device fails every later config here:
          // say so and exit, and the tuner starts a fresh worker.
          if (Status health = internal::probe_device(*device); !health.ok()) {
            m.outcome = Outcome::kCrashed;
            m.error.message += "; the device is unusable after it (" + health.error().message +
                               "): its worker was replaced";
            unusable = true;
          }
        }
        internal::Message answer = internal::measure_reply(m, captured);
        if (!wire::send(fd, answer.json, answer.raw)) return 1;
        if (unusable) return 3;
        continue;
      } else {
        reply = error_json(make_error(ErrorCode::kInvalidArgument,
                                      "unexpected request '" + op + "' (a call comes first)"));
      }
    } catch (const std::exception& e) {
      reply = error_json(make_error(ErrorCode::kCorrupt, e.what()));
    }
    if (!wire::send(fd, reply)) return 1;
    if (unusable) return 3;
  }
}

}  // namespace kiln
