// Plain C++ runners and host tensors for the framework tests: real code
// that really runs (and counts what the tuner asks of it), no mocks of Kiln.
#pragma once

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <string>
#include <vector>

#include "kiln/framework/choose_one.hpp"
#include "kiln/framework/runner.hpp"

namespace kiln::testing {

// y = a * x over a [rows, cols] f32 tensor; inputs are (x, y). Tactic t
// repeats the work `t + 1 + slowdown` times, so higher tactics are slower
// by construction; `broken` tactics return an error instead of running.
class ScaleRunner : public TunableRunner {
 public:
  ScaleRunner(std::string name, std::vector<int> tactics, float a = 2.0f, int slowdown = 0)
      : TunableRunner(std::move(name), "1"),
        tactics_(std::move(tactics)),
        a_(a),
        slowdown_(slowdown) {}

  std::vector<int> tactics(const ArgList&) override {
    ++listed;
    return tactics_;
  }
  Status prepare(const ArgList&, std::span<const int> t) override {
    ++prepared;
    prepared_tactics += t.size();
    return ok_status();
  }
  Status run(const ArgList& in, int tactic) override {
    ++runs;
    last_tactic = tactic;
    for (int b : broken)
      if (b == tactic) return make_error(ErrorCode::kLaunchFailed, "tactic is broken");
    const auto* x = static_cast<const float*>(in.at(0).data);
    auto* y = static_cast<float*>(in.at(1).data);
    std::int64_t n = in.at(0).tensor.numel();
    int reps = (tactic < 0 ? 0 : tactic) + 1 + slowdown_;
    for (int r = 0; r < reps; ++r) {
      for (std::int64_t i = 0; i < n; ++i) y[i] = a_ * x[i] + static_cast<float>(r) * 0.0f;
      asm volatile("" ::: "memory");  // keep every repetition
    }
    return ok_status();
  }

  std::vector<int> broken;
  std::atomic<int> listed{0}, prepared{0}, runs{0};
  std::atomic<std::size_t> prepared_tactics{0};
  std::atomic<int> last_tactic{-2};

 private:
  std::vector<int> tactics_;
  float a_;
  int slowdown_;
};

// A [rows, cols] f32 tensor pair (x, y) in host memory.
struct ScaleCall {
  std::vector<float> x, y;
  ArgList args;
  ScaleCall(std::int64_t rows, std::int64_t cols)
      : x(static_cast<std::size_t>(rows * cols)), y(x.size(), 0.0f) {
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 13) * 0.25f;
    args = {Arg::of_tensor("x", x.data(), TensorArg::contiguous(DType::kF32, {rows, cols})),
            Arg::of_tensor("y", y.data(), TensorArg::contiguous(DType::kF32, {rows, cols}))};
  }
};

// Fast timing for tests: one warm-up, three repetitions.
inline TacticTunerOptions quick_options() {
  TacticTunerOptions o;
  o.warmup = 1;
  o.min_reps = 3;
  o.max_reps = 3;
  o.target_seconds = 0;
  return o;
}

inline std::filesystem::path fresh_dir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() /
             ("kiln_framework_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

}  // namespace kiln::testing
