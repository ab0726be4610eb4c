// kiln_fault_tuner: one tuning run of a small CPU kernel over a cache
// directory that the run first makes faulty, then a check of what the run
// left in the cache. Runs as its own process so that the file-system faults
// (a private mount namespace, a resource limit) stay inside it. Prints one
// JSON document; exit 0 when tuning finished, whatever its configs did.
//
//   kiln_fault_tuner --cache DIR --fs normal|readonly|full
#include <sched.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kiln/backends/cpu.hpp"
#include "kiln/backends/toolchain.hpp"
#include "kiln/cache/artifact_cache.hpp"
#include "kiln/cache/tuning_cache.hpp"
#include "kiln/tuner/tuner.hpp"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// MODE 0 is right, 1 is wrong, 2 does not compile; UNROLL changes the speed.
constexpr const char* kSource = R"(
#include "kiln/cpu_kernel.h"
namespace f {
template <int UNROLL, int MODE>
void axpy(const kiln::cpu::BlockContext& ctx, const float* x, float* y, int n) {
  static_assert(MODE != 2, "MODE 2 never compiles");
  const int per = (n + static_cast<int>(ctx.grid_dim.x) - 1) / static_cast<int>(ctx.grid_dim.x);
  const int lo = static_cast<int>(ctx.block_idx.x) * per;
  const int hi = lo + per < n ? lo + per : n;
  int i = lo;
  for (; i + UNROLL <= hi; i += UNROLL)
    for (int u = 0; u < UNROLL; ++u) y[i + u] = 3.0f * x[i + u] + (MODE == 1 ? 0.5f : 0.0f);
  for (; i < hi; ++i) y[i] = 3.0f * x[i] + (MODE == 1 ? 0.5f : 0.0f);
}
}  // namespace f
)";

[[noreturn]] void die(const std::string& what) {
  std::cerr << "kiln_fault_tuner: " << what << "\n";
  std::exit(2);
}

// A private mount namespace, so the mounts below are this process's alone.
bool private_mounts() {
  if (unshare(CLONE_NEWNS) != 0) return false;
  return mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) == 0;
}

// Makes `dir` read-only: a read-only bind mount (EROFS even for root) where
// mounts are allowed, else the permission bits (enough for a non-root user).
std::string make_read_only(const fs::path& dir) {
  if (private_mounts() && mount(dir.c_str(), dir.c_str(), nullptr, MS_BIND, nullptr) == 0 &&
      mount(nullptr, dir.c_str(), nullptr, MS_REMOUNT | MS_BIND | MS_RDONLY, nullptr) == 0) {
    return "read-only bind mount";
  }
  if (geteuid() == 0)
    die("cannot make a read-only directory: mounts refused and root ignores modes");
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.is_directory()) chmod(e.path().c_str(), 0500);
  }
  chmod(dir.c_str(), 0500);
  return "permission bits 0500";
}

// Makes `dir` a nearly full file system: a 256 KiB tmpfs filled but for
// `room` bytes where mounts are allowed, else a file-size limit (writes past
// `room` bytes fail with EFBIG, as on a full disk).
std::string make_full(const fs::path& dir, std::size_t room) {
  if (private_mounts() && mount("tmpfs", dir.c_str(), "tmpfs", 0, "size=256k,mode=0700") == 0) {
    std::ofstream filler(dir / "filler", std::ios::binary);
    std::string block(4096, 'x');
    std::size_t written = 0;
    while (written + block.size() <= 256 * 1024 - room && filler.write(block.data(), block.size()))
      written += block.size();
    filler.close();
    return "256 KiB tmpfs with " + std::to_string(room) + " bytes free";
  }
  std::signal(SIGXFSZ, SIG_IGN);
  rlimit limit{room, room};
  if (setrlimit(RLIMIT_FSIZE, &limit) != 0)
    die("setrlimit failed: " + std::string(strerror(errno)));
  return "file-size limit of " + std::to_string(room) + " bytes";
}

kiln::TunableKernel axpy_kernel() {
  kiln::TunableKernel k;
  k.tmpl.name = "fault_axpy";
  k.tmpl.source = kSource;
  k.tmpl.entry = "f::axpy<{UNROLL},{MODE}>";
  k.tmpl.space.param("UNROLL", {1, 2, 8}).param("MODE", {0, 1, 2});
  k.tmpl.space.default_config(kiln::Config{{"UNROLL", std::int64_t{1}}, {"MODE", std::int64_t{0}}});
  k.launch = [](const kiln::Config&, const kiln::ArgList&) {
    kiln::LaunchGeometry g;
    g.grid = kiln::Dim3{4, 1, 1};
    return g;
  };
  k.outputs = {"y"};
  return k;
}

json cache_report(const kiln::Options& opts) {
  kiln::ArtifactCache artifacts(opts);
  json broken = json::array();
  std::size_t entries = 0, temporary = 0;
  for (const auto& f : artifacts.scan(true)) {
    if (f.temporary) {
      ++temporary;  // a failed write must not leave its temporary file behind
      continue;
    }
    if (!f.is_program) ++entries;  // one per key; a program serves several
    if (!f.problem.empty()) broken.push_back(f.path.string() + ": " + f.problem);
  }
  kiln::TuningCache tunings(opts);
  json files = json::array();
  for (const auto& f : tunings.files()) files.push_back(f.to_json());
  return {{"artifact_entries", entries},
          {"broken_artifacts", broken},
          {"temporary_files", temporary},
          {"tuning_records", tunings.records().size()},
          {"tuning_files", files}};
}

}  // namespace

int main(int argc, char** argv) {
  fs::path dir;
  std::string mode = "normal";
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    if (flag == "--cache")
      dir = argv[i + 1];
    else if (flag == "--fs")
      mode = argv[i + 1];
    else
      die("unknown flag " + flag + " (usage: --cache DIR --fs normal|readonly|full)");
  }
  if (dir.empty()) die("--cache DIR is required");
  fs::create_directories(dir);
  chmod(dir.c_str(), 0700);

  json out;
  if (mode == "readonly")
    out["fault"] = make_read_only(dir);
  else if (mode == "full")
    out["fault"] = make_full(dir, 6 * 1024);
  else if (mode != "normal")
    die("unknown --fs " + mode);

  kiln::Options opts = kiln::Options::global();
  opts.cache_dir = dir;
  kiln::Backend backend;
  backend.compiler = std::shared_ptr<kiln::Compiler>(kiln::cpu::make_compiler());
  backend.toolchain = kiln::current_toolchain("cpu");
  backend.arch = "host";
  backend.format = kiln::BinaryFormat::kCpuObject;
  backend.bench.open_device = [](int) { return kiln::cpu::open_device(1); };

  const int n = 4096;
  std::vector<float> x(n), y(n, 0.0f);
  for (int i = 0; i < n; ++i) x[i] = static_cast<float>(i % 13) * 0.25f;
  kiln::ArgList args = {
      kiln::Arg::of_tensor("x", x.data(), kiln::TensorArg::contiguous(kiln::DType::kF32, {n})),
      kiln::Arg::of_tensor("y", y.data(), kiln::TensorArg::contiguous(kiln::DType::kF32, {n})),
      kiln::Arg::of_scalar("n", n)};

  json measurements = json::array();
  {
    kiln::ArtifactCache artifacts(opts);
    kiln::TuningCache tunings(opts);
    out["artifact_cache_state"] = kiln::cache_state_name(artifacts.state());
    auto device = kiln::cpu::open_device(1);
    if (!device.ok()) die(device.error().describe());
    kiln::Autotuner tuner(backend, &artifacts, &tunings);
    kiln::TuneOptions to;
    to.pipeline.progress = false;
    auto r = tuner.run(axpy_kernel(), args, **device, to);
    if (!r.ok()) {
      out["error"] = r.error().describe();
      std::cout << out.dump(2) << std::endl;
      return 1;
    }
    out["source"] = kiln::source_name(r->source);
    out["winner"] = r->config.to_json();
    for (const auto& m : r->measurements)
      measurements.push_back({{"config", m.config.to_string()},
                              {"outcome", kiln::outcome_name(m.outcome)},
                              {"reason", m.reason()}});
    out["stats"] = r->stats.to_json();
    out["artifact_stats"] = artifacts.stats().to_json();
  }
  out["measurements"] = measurements;
  bool right = true;
  for (int i = 0; i < n; ++i) right = right && y[i] == 3.0f * x[i];
  out["result_right"] = right;
  out["cache_after"] = cache_report(opts);
  std::cout << out.dump(2) << std::endl;
  return 0;
}
