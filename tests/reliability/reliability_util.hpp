// Shared pieces of the reliability tests: a scratch directory with its own
// caches, a CPU backend with a chosen isolation, and a y = a*x kernel call.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "kiln/backends/cpu.hpp"
#include "kiln/backends/toolchain.hpp"
#include "kiln/cache/artifact_cache.hpp"
#include "kiln/cache/tuning_cache.hpp"
#include "kiln/tuner/tuner.hpp"

namespace kiln::test {

inline std::filesystem::path scratch_dir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() /
             ("kiln_reliability_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

inline Backend cpu_backend(Isolation isolation) {
  Backend b;
  b.compiler = std::shared_ptr<Compiler>(cpu::make_compiler());
  b.toolchain = current_toolchain("cpu");
  b.arch = "host";
  b.format = BinaryFormat::kCpuObject;
  b.bench.isolation = isolation;
  return b;
}

// Caches in a scratch directory (removed at the end) and a 1-thread CPU device.
struct Scratch {
  std::filesystem::path dir;
  Options opts;
  ArtifactCache artifacts;
  TuningCache tunings;
  std::unique_ptr<Device> device;

  explicit Scratch(const std::string& name)
      : dir(scratch_dir(name)),
        opts(with_dir(dir)),
        artifacts(opts),
        tunings(opts),
        device(std::move(cpu::open_device(1).value())) {}
  ~Scratch() { std::filesystem::remove_all(dir); }

  static Options with_dir(const std::filesystem::path& d) {
    Options o = Options::global();
    o.cache_dir = d / "cache";
    return o;
  }

  // Nothing in either cache is broken, and a fresh reader of the tuning
  // files sees one record per tuned problem and no malformed one.
  void expect_caches_clean(std::size_t tuning_records) {
    SweepReport report = artifacts.verify(false);
    EXPECT_TRUE(report.broken.empty()) << report.to_json().dump();
    EXPECT_GT(report.entries, 0u);
    TuningCache fresh(opts);
    EXPECT_EQ(fresh.records().size(), tuning_records);
    for (const auto& f : fresh.files()) {
      EXPECT_TRUE(f.problem.empty()) << f.path << ": " << f.problem;
      EXPECT_TRUE(f.skipped.empty()) << f.path;
    }
  }
};

// y = a * x over n floats, split over a grid of 4 blocks.
struct AxCall {
  std::vector<float> x, y;
  ArgList args;
  explicit AxCall(int n) : x(n), y(n, 0.0f) {
    for (int i = 0; i < n; ++i) x[i] = static_cast<float>(i % 13) * 0.25f;
    args = {Arg::of_tensor("x", x.data(), TensorArg::contiguous(DType::kF32, {n})),
            Arg::of_tensor("y", y.data(), TensorArg::contiguous(DType::kF32, {n})),
            Arg::of_scalar("n", n), Arg::of_scalar("a", 3.0f, false)};
  }
};

inline LaunchGeometry four_blocks(const Config&, const ArgList&) {
  LaunchGeometry g;
  g.grid = Dim3{4, 1, 1};
  return g;
}

inline const Measurement* find_mode(const TuneResult& r, std::int64_t unroll, std::int64_t mode) {
  for (const auto& m : r.measurements) {
    if (m.config.get_int("UNROLL") == unroll && m.config.get_int("MODE") == mode) return &m;
  }
  return nullptr;
}

inline std::string read_text(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// How every test kernel ends: y = a * x + `offset` over its block's share of
// n, then the closing of the function and of namespace t.
inline std::string ax_tail(const std::string& offset = "0.0f") {
  return R"(
  const int per = (n + static_cast<int>(ctx.grid_dim.x) - 1) / static_cast<int>(ctx.grid_dim.x);
  const int lo = static_cast<int>(ctx.block_idx.x) * per;
  const int hi = lo + per < n ? lo + per : n;
  for (int i = lo; i < hi; ++i) y[i] = a * x[i] + )" +
         offset + R"(;
}
}  // namespace t
)";
}

// Replaces every "@DIR@" in `source` with `dir`.
inline std::string with_dir(std::string source, const std::filesystem::path& dir) {
  for (auto at = source.find("@DIR@"); at != std::string::npos; at = source.find("@DIR@"))
    source.replace(at, 5, dir.string());
  return source;
}

}  // namespace kiln::test
