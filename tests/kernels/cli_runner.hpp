// Runs the real `kiln` executable (KILN_CLI_PATH, or a suite's own) in a child process over
// a fresh cache directory per test, with stdout and stderr kept apart.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "run_command.hpp"

namespace kiln::testing {

namespace fs = std::filesystem;

struct CliRun {
  int exit_code = -1;
  std::string out, err;
  nlohmann::json json() const { return nlohmann::json::parse(out); }  // throws when not JSON
};

inline std::string read_file(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("kiln_cli_" + std::string(info->name()) + "_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Runs `kiln ARGS` over this test's cache directory: stdout and stderr apart.
  CliRun kiln(const std::string& args) const { return kiln_with("", args); }

  // `kiln tune --json` of a CPU template and its spec, written into this
  // test's directory, with `env` (VAR=value ...) set, killed after 240 s so
  // that a hang fails the test rather than the test run.
  CliRun tune_template(const std::string& source, const std::string& spec, const std::string& entry,
                       const std::string& shape, const std::string& env = "",
                       const std::string& flags = "") const {
    std::ofstream(dir_ / "kernel.cpp") << source;
    std::ofstream(dir_ / "kernel.json") << spec;
    return kiln_with("timeout -k 5 240 ",
                     "tune --template " + (dir_ / "kernel.cpp").string() + " --space " +
                         (dir_ / "kernel.json").string() + " --entry '" + entry + "' --shape " +
                         shape + " --json " + flags,
                     env);
  }

  // `kiln ARGS` with `env` set, run by `runner` (a prefix such as a timeout).
  CliRun kiln_with(const std::string& runner, const std::string& args,
                   const std::string& env = "") const {
    const fs::path err = dir_ / "stderr.txt";
    const std::string cmd = runner + "env KILN_CACHE_DIR=" + (dir_ / "cache").string() +
                            " KILN_RANK= RANK= LOCAL_RANK= KILN_TUNING= KILN_RETUNE= " + env + " " +
                            cli_ + " " + args + " 2>" + err.string();
    CommandRun ran = run_command(cmd);
    CliRun run;
    run.exit_code = ran.exit_code;
    run.out = std::move(ran.out);
    run.err = read_file(err);
    return run;
  }

  // `kiln ARGS` is a usage error: exit 2, every `expected` text in stderr,
  // nothing on stdout, no cache directory created (the input was refused
  // before anything was allocated, compiled or cached).
  void expect_usage_error(const std::string& args, const std::vector<std::string>& expected) {
    CliRun run = kiln(args);
    EXPECT_EQ(run.exit_code, 2) << args << "\n" << run.err;
    for (const auto& e : expected)
      EXPECT_NE(run.err.find(e), std::string::npos) << args << "\nwants: " << e << "\n" << run.err;
    EXPECT_TRUE(run.out.empty()) << args << "\n" << run.out;
    EXPECT_FALSE(fs::exists(dir_ / "cache")) << args << ": wrote to the cache";
  }

  fs::path dir_;
  // The executable kiln() runs: `kiln`; a suite of another command's sets
  // its own (tests/lab/: `kiln-lab`).
  std::string cli_ = KILN_CLI_PATH;
};

// A small CUDA user kernel (y = a * x, ITEMS elements a thread) and its
// spec, written into `dir`: the CUDA side of `kiln tune --template`.
inline std::string write_cuda_user_kernel(const fs::path& dir) {
  std::ofstream(dir / "scale.cu") << R"cu(
template <int BLOCK, int ITEMS>
__global__ void scale(const float* x, float* y, float a, int n) {
  const int first = (blockIdx.x * BLOCK * ITEMS) + threadIdx.x;
  for (int k = 0; k < ITEMS; ++k) {
    const int i = first + k * BLOCK;
    if (i < n) y[i] = a * x[i];
  }
}
)cu";
  std::ofstream(dir / "scale.json") << R"json({
  "backend": "cuda",
  "space": {"parameters": [{"name": "BLOCK", "values": [64, 128, 256]},
                           {"name": "ITEMS", "values": [1, 4]}]},
  "launch": {"grid": ["ceil_div(N, BLOCK * ITEMS)"], "block": ["BLOCK"]},
  "args": [{"name": "x", "dtype": "f32", "shape": ["N"]},
           {"name": "y", "dtype": "f32", "shape": ["N"], "role": "output"},
           {"name": "a", "type": "f32", "value": 2.0},
           {"name": "n", "type": "i32", "value": "N"}]
})json";
  return "tune --template " + (dir / "scale.cu").string() + " --space " +
         (dir / "scale.json").string() + " --entry 'scale<{BLOCK},{ITEMS}>' --shape N=100000";
}

// Configs of a `kiln tune --json` report with this status.
inline std::size_t count_status(const nlohmann::json& report, const std::string& status) {
  std::size_t n = 0;
  for (const auto& c : report.at("configs")) n += c.is_object() && c.value("status", "") == status;
  return n;
}

// Whether a report entry (a row of "configs", "winner", "default") was
// measured: status "ok" and a "median_s". Only then does it carry timings;
// a timed-out or failed entry has none, and reading one from a const json
// with operator[] aborts the test binary (an nlohmann assertion) instead of
// failing the test. Read timings after `ASSERT_TRUE(measured(entry))`, with
// at(), so a missing field is still a failure and not a crash.
inline ::testing::AssertionResult measured(const nlohmann::json& entry) {
  if (!entry.is_object()) return ::testing::AssertionFailure() << "not an entry: " << entry.dump();
  const std::string status = entry.value("status", "(none)");
  if (status != "ok") {
    return ::testing::AssertionFailure()
           << "config " << entry.value("config", nlohmann::json()).dump() << " is " << status
           << ": " << entry.value("reason", "(no reason given)");
  }
  if (!entry.contains("median_s")) {
    return ::testing::AssertionFailure() << "an ok entry without median_s: " << entry.dump();
  }
  return ::testing::AssertionSuccess();
}

}  // namespace kiln::testing
