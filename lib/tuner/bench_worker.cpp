// The benchmark worker's side of kiln/bench_worker.hpp, and where the tuner
// finds the worker executable.
#include "kiln/bench_worker.hpp"

#include <unistd.h>

#include <climits>
#include <filesystem>
#include <optional>

#include "bench_call.hpp"
#include "call_state.hpp"
#include "kiln/compile_worker.hpp"
#include "kiln/options.hpp"
#include "kiln/worker_process.hpp"
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
            m.reason += "; the device is unusable after it (" + health.error().message +
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

Result<std::string> find_bench_worker(const std::string& configured) {
  std::vector<std::string> tried;
  auto usable = [&](const std::filesystem::path& p) {
    tried.push_back(p.string());
    return !p.empty() && ::access(p.c_str(), X_OK) == 0;
  };
  if (!configured.empty()) {
    if (usable(configured)) return configured;
    return make_error(ErrorCode::kNotFound,
                      "the benchmark worker '" + configured + "' is not an executable file",
                      {{"fix", "set Backend::worker_path to the kiln-bench-worker executable"}});
  }
  const auto& env = Options::global().bench_worker;
  if (!env.empty()) {
    if (usable(env)) return env.string();
    return make_error(ErrorCode::kNotFound,
                      "KILN_WORKER='" + env.string() + "' is not an executable file",
                      {{"fix", "point KILN_WORKER at the kiln-bench-worker executable"}});
  }
  for (const char* built : {KILN_BENCH_WORKER_BUILD_PATH, KILN_BENCH_WORKER_INSTALL_PATH}) {
    if (usable(built)) return std::string(built);
  }
  char self[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  if (n > 0) {
    auto beside =
        std::filesystem::path(std::string(self, static_cast<std::size_t>(n))).parent_path() /
        "kiln-bench-worker";
    if (usable(beside)) return beside.string();
  }
  std::string list;
  for (const auto& t : tried) list += (list.empty() ? "" : ", ") + t;
  return make_error(ErrorCode::kNotFound,
                    "no kiln-bench-worker executable found (tried " + list + ")",
                    {{"fix", "build the kiln_bench_worker target, or set KILN_WORKER"}});
}

Result<CompilerFactory> process_compilers(const std::string& backend,
                                          const std::string& configured) {
  if (backend != "cpu" && backend != "cuda") {
    throw Error(ErrorCode::kInvalidArgument,
                "process_compilers: backend '" + backend + "' is not 'cpu' or 'cuda'");
  }
  auto exe = find_bench_worker(configured);
  if (!exe.ok()) return exe.error();
  std::vector<std::string> argv = {*exe, "--compile", backend};
  return CompilerFactory([argv](int) -> std::shared_ptr<Compiler> {
    return std::make_shared<WorkerProcessCompiler>(argv);
  });
}

}  // namespace kiln
