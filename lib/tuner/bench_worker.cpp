// The benchmark worker's side of include/kiln/tuner/bench_worker.hpp (where the tuner
// finds the worker: worker_find.cpp).
#include "kiln/tuner/bench_worker.hpp"

#include <memory>
#include <optional>

#include "bench_call.hpp"
#include "call_state.hpp"
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

// What the benchmark operations of one worker share.
struct BenchState {
  WorkerDeviceOpener open;
  std::unique_ptr<Device> device;
  std::optional<WorkerCall> current;

  Result<worker::Payload> set_up(BenchCall call) {
    WorkerCall wc{std::move(call), {}, std::nullopt};
    if (!device) {
      auto opened = open(wc.call.device, wc.call.threads);
      if (!opened.ok()) return opened.error();
      device = std::move(*opened);
    }
    auto replica = internal::replicate(*device, wc.call.args);
    if (!replica.ok()) return replica.error();
    wc.replica = std::move(*replica);
    // The replica holds the bytes the restore_value arguments had before
    // anything ran, so capturing here snapshots what the tuner snapshotted.
    TunableKernel lists;
    lists.outputs = wc.call.outputs;
    lists.restore_value = wc.call.restore_value;
    lists.reset_to_zero = wc.call.reset_to_zero;
    auto state = internal::CallState::capture(*device, lists, wc.replica.args);
    if (!state.ok()) return state.error();
    current = std::move(wc);
    current->state = std::move(*state);
    current->state->rebind(&current->replica.args);
    return worker::Payload{{{"device", device->properties().name}}, {}};
  }

  worker::WorkerServer::Handled measure(internal::MeasureRequest r) {
    if (!current || !device) {
      return make_error(ErrorCode::kInvalidArgument, "a measure request before any call");
    }
    internal::MeasureReply reply;
    internal::MeasureInputs in{&current->replica.args,
                               &*current->state,
                               &current->call.reference,
                               &current->call.options,
                               current->call.capture_outputs ? &reply.outputs : nullptr,
                               r.stop};
    Measurement& m = reply.measurement;
    m = internal::measure(*device, r.artifact, r.geometry, in);
    int exit_after = -1;
    if (!m.ok() && m.outcome != Outcome::kWrongResult) {
      // A fault that poisons the device fails every later config here: say
      // so and exit, and the tuner starts a fresh worker.
      if (Status health = internal::probe_device(*device); !health.ok()) {
        m.outcome = Outcome::kCrashed;
        m.error.message += "; the device is unusable after it (" + health.error().message +
                           "): its worker was replaced";
        exit_after = 3;
      }
    }
    return {reply.encode(), exit_after};
  }
};

}  // namespace

void add_bench_handlers(worker::WorkerServer& server, WorkerDeviceOpener open) {
  auto state = std::make_shared<BenchState>();
  state->open = std::move(open);
  server.on<BenchCall>([state](BenchCall call) -> worker::WorkerServer::Handled {
    return state->set_up(std::move(call));
  });
  server.on<internal::MeasureRequest>(
      [state](internal::MeasureRequest r) { return state->measure(std::move(r)); });
  server.on<internal::ReleaseRequest>(
      [state](internal::ReleaseRequest) -> worker::WorkerServer::Handled {
        state->current.reset();  // an idle worker keeps no copy of the last call's tensors
        return worker::Payload{};
      });
}

}  // namespace kiln
