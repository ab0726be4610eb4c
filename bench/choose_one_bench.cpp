// The hot path of choose_one against a plain hash-map lookup, side by side
// in one run (Google Benchmark). A framework calls choose_one on every op of
// every forward pass, so a hit must cost a small constant over the probe a
// hand-written cache would do:
//   map_probe          std::unordered_map<uint64_t, int>::find, key precomputed
//   map_probe_shapes   the same with the key combined from op id and every
//                      dim per call (boost-style hash_combine): the plain
//                      cache a framework would write by hand
//   map_probe_string   the same keyed on a string built from op and shape
//                      (what a naive framework cache does per call)
//   key_only           TacticTuner::key_of: hashing op, runners and shapes
//   choose_one_static  a hit, three 2-D tensor inputs, no dynamic dims
//   choose_one_dynamic a hit with a bucketed token dim and a constraint
//   choose_one_skipped an op in this thread's skip list
#include <benchmark/benchmark.h>

#include <string>
#include <unordered_map>
#include <vector>

#include "kiln/framework/choose_one.hpp"
#include "kiln/framework/tuning_scope.hpp"

namespace {

using namespace kiln;

class NopRunner : public TunableRunner {
 public:
  explicit NopRunner(std::string name) : TunableRunner(std::move(name), "1") {}
  std::vector<int> tactics(const ArgList&) override { return {0, 1}; }
  Status run(const ArgList&, int) override { return ok_status(); }
};

struct Op {
  std::vector<float> x = std::vector<float>(64 * 128), w = std::vector<float>(128),
                     y = std::vector<float>(64 * 128);
  NopRunner a{"bench_kernel"}, b{"bench_reference"};
  TunableRunner* runners[2] = {&a, &b};
  ArgList args;
  TuningSpec spec;
  TacticTuner tuner;
  explicit Op(bool dynamic) {
    args = {Arg::of_tensor("x", x.data(), TensorArg::contiguous(DType::kF32, {37, 128})),
            Arg::of_tensor("w", w.data(), TensorArg::contiguous(DType::kF32, {128})),
            Arg::of_tensor("y", y.data(), TensorArg::contiguous(DType::kF32, {37, 128}))};
    if (dynamic) {
      spec.dynamic.push_back(DynamicDim::of(0, 0, power_of_two_buckets(1, 4096)));
      spec.constraints.push_back({2, 0, [](auto p) { return p[0]; }});
      spec.finalize();
    }
    TuningScope tuning(true);
    tuner.choose_one("rms_norm", runners, args, spec);  // tunes: later calls hit
  }
};

void map_probe(benchmark::State& state) {
  std::unordered_map<std::uint64_t, int> map;
  for (std::uint64_t i = 0; i < 64; ++i) map[i * 0x9e3779b97f4a7c15ull] = static_cast<int>(i);
  std::uint64_t key = 17 * 0x9e3779b97f4a7c15ull;
  for (auto _ : state) {
    benchmark::DoNotOptimize(key);
    auto it = map.find(key);
    benchmark::DoNotOptimize(it->second);
  }
}
BENCHMARK(map_probe);

void map_probe_shapes(benchmark::State& state) {
  Op op(false);
  auto key_of = [&](const ArgList& args) {
    std::uint64_t h = 0x51ed27;  // the op's id
    auto combine = [&](std::uint64_t v) { h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2); };
    for (const Arg& a : args) {
      combine(static_cast<std::uint64_t>(a.tensor.dtype));
      for (std::int64_t d : a.tensor.shape) combine(static_cast<std::uint64_t>(d));
    }
    return h;
  };
  std::unordered_map<std::uint64_t, int> map;
  for (std::uint64_t i = 0; i < 64; ++i) map[i * 0x9e3779b97f4a7c15ull] = static_cast<int>(i);
  map[key_of(op.args)] = 1;
  for (auto _ : state) {
    benchmark::DoNotOptimize(op.args.data());
    auto it = map.find(key_of(op.args));
    benchmark::DoNotOptimize(it->second);
  }
}
BENCHMARK(map_probe_shapes);

void map_probe_string(benchmark::State& state) {
  std::unordered_map<std::string, int> map;
  map["rms_norm|37x128|128|37x128"] = 1;
  std::int64_t rows = 37, cols = 128;
  for (auto _ : state) {
    benchmark::DoNotOptimize(rows);
    std::string key = "rms_norm|" + std::to_string(rows) + "x" + std::to_string(cols) + "|" +
                      std::to_string(cols) + "|" + std::to_string(rows) + "x" +
                      std::to_string(cols);
    auto it = map.find(key);
    benchmark::DoNotOptimize(it->second);
  }
}
BENCHMARK(map_probe_string);

void key_only(benchmark::State& state) {
  Op op(false);
  for (auto _ : state) {
    benchmark::DoNotOptimize(TacticTuner::key_of("rms_norm", op.runners, op.args, op.spec));
  }
}
BENCHMARK(key_only);

void choose_one_static(benchmark::State& state) {
  Op op(false);
  for (auto _ : state) {
    Choice c = op.tuner.choose_one("rms_norm", op.runners, op.args, op.spec);
    benchmark::DoNotOptimize(c);
    if (c.source != ChoiceSource::kMemory) state.SkipWithError("not a hit");
  }
}
BENCHMARK(choose_one_static);

void choose_one_dynamic(benchmark::State& state) {
  Op op(true);
  for (auto _ : state) {
    Choice c = op.tuner.choose_one("rms_norm", op.runners, op.args, op.spec);
    benchmark::DoNotOptimize(c);
    if (c.source != ChoiceSource::kMemory) state.SkipWithError("not a hit");
  }
}
BENCHMARK(choose_one_dynamic);

void choose_one_skipped(benchmark::State& state) {
  Op op(false);
  SkipScope skip("rms_norm");
  for (auto _ : state) {
    Choice c = op.tuner.choose_one("rms_norm", op.runners, op.args, op.spec);
    benchmark::DoNotOptimize(c);
  }
}
BENCHMARK(choose_one_skipped);

}  // namespace

BENCHMARK_MAIN();
