// Where the tuner finds its worker executables, and the check that a worker
// the user named is one (worker_find.hpp, include/kiln/tuner/bench_worker.hpp).
#include "worker_find.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <climits>
#include <filesystem>
#include <optional>
#include <vector>

#include "kiln/compile/compile_worker.hpp"
#include "kiln/core/options.hpp"
#include "kiln/tuner/bench_worker.hpp"
#include "process_bench.hpp"

namespace kiln {

namespace {

const char* const kThreadsFix =
    "benchmark in threads (kiln tune --isolation thread; Isolation::kThread)";

bool executable_file(const std::filesystem::path& p) {
  std::error_code ec;
  return !p.empty() && std::filesystem::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0;
}

// Searched, in order, when the user named no worker.
std::vector<std::string> usual_places() {
  std::string exe;
  char buf[PATH_MAX];
  if (const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1); n > 0) {
    exe.assign(buf, static_cast<std::size_t>(n));
  }
  std::vector<std::string> places;
  // Next to the shared library holding the tuner, when it is one (the Python
  // package ships libkiln.so and its worker side by side): that worker was
  // built with this library, whatever the build paths hold.
  Dl_info info{};
  std::error_code ec;
  if (::dladdr(reinterpret_cast<void*>(&usual_places), &info) && info.dli_fname &&
      std::filesystem::weakly_canonical(info.dli_fname, ec).string() != exe) {
    places.push_back(
        (std::filesystem::path(info.dli_fname).parent_path() / "kiln-bench-worker").string());
  }
  places.push_back(KILN_BENCH_WORKER_BUILD_PATH);
  places.push_back(KILN_BENCH_WORKER_INSTALL_PATH);
  if (!exe.empty()) {
    places.push_back((std::filesystem::path(exe).parent_path() / "kiln-bench-worker").string());
  }
  return places;
}

std::optional<std::string> searched_worker() {
  for (const auto& p : usual_places()) {
    if (executable_file(p)) return p;
  }
  return std::nullopt;
}

// A worker path the user named, how messages name it, and the fix.
struct NamedWorker {
  std::string path;
  std::string name;  // "KILN_WORKER='/x'"
  std::string fix;
};

std::optional<NamedWorker> named_worker(const std::string& configured) {
  const auto found = searched_worker();
  const std::string good = "kiln-bench-worker" + (found ? " (" + *found + ")" : std::string());
  if (!configured.empty()) {
    return NamedWorker{configured, "BenchPlacement::worker_path '" + configured + "'",
                       "set BenchPlacement::worker_path to " + good +
                           ", leave it empty, or use Isolation::kThread"};
  }
  const std::string env = Options::global().bench_worker.string();
  if (!env.empty()) {
    return NamedWorker{env, "KILN_WORKER='" + env + "'",
                       "point KILN_WORKER at " + good + ", unset it, or " + kThreadsFix};
  }
  return std::nullopt;
}

}  // namespace

Result<std::string> find_bench_worker(const std::string& configured) {
  if (auto named = named_worker(configured)) {
    if (executable_file(named->path)) return named->path;
    return make_error(ErrorCode::kNotFound,
                      named->name + " is not an executable file: " + named->fix);
  }
  if (auto found = searched_worker()) return *found;
  std::string list;
  for (const auto& p : usual_places()) list += (list.empty() ? "" : ", ") + p;
  return make_error(ErrorCode::kNotFound, "no kiln-bench-worker executable found (tried " + list +
                                              "): build the kiln_bench_worker target, point "
                                              "KILN_WORKER at one, or " +
                                              kThreadsFix);
}

Result<CompilerFactory> process_compilers(const std::string& backend,
                                          const std::string& configured) {
  // The worker finds the backend by this name, and says when it has none.
  if (backend.empty()) {
    return make_error(ErrorCode::kInvalidArgument,
                      "process_compilers: no backend named (give its registered name: cpu, cuda)");
  }
  auto exe = find_bench_worker(configured);
  if (!exe.ok()) return exe.error();
  std::vector<std::string> argv = {*exe, "--compile", backend};
  // A worker the user named must start and answer as a compile worker now:
  // a wrong program would fail every compile. This build's own is trusted,
  // so that a run served from the cache starts no process.
  if (auto named = named_worker(configured)) {
    WorkerProcessCompiler probe(argv);
    if (auto st = probe.start(); !st.ok()) {
      return make_error(ErrorCode::kUnavailable, named->name +
                                                     " is not a working compile worker (" +
                                                     st.error().message + "): " + named->fix);
    }
  }
  return CompilerFactory([argv](int) -> std::shared_ptr<Compiler> {
    return std::make_shared<WorkerProcessCompiler>(argv);
  });
}

namespace internal {

bool worker_configured(const std::string& configured) {
  return !configured.empty() || !Options::global().bench_worker.empty();
}

Result<std::string> choose_bench_worker(const std::string& configured, double timeout_s) {
  auto exe = find_bench_worker(configured);
  if (!exe.ok()) return exe.error();
  Status hello = greet_bench_worker(*exe, timeout_s);
  if (hello.ok()) return *exe;
  if (auto named = named_worker(configured)) {
    return make_error(ErrorCode::kUnavailable, named->name +
                                                   " is not a working benchmark worker (" +
                                                   hello.error().message + "): " + named->fix);
  }
  return make_error(ErrorCode::kUnavailable,
                    "the benchmark worker " + *exe + " does not work (" + hello.error().message +
                        "): rebuild it (the kiln_bench_worker target), point KILN_WORKER at one "
                        "that works, or " +
                        kThreadsFix);
}

}  // namespace internal

}  // namespace kiln
