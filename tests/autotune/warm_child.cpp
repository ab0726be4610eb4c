// A program built as the `kiln` command is (KILN_LAZY_PLUGINS: the CPU
// backend's compiler is a plugin loaded on first use): it tunes, or serves
// from the cache, one small CPU kernel over the caches of KILN_CACHE_DIR,
// checks the result, and prints what the process mapped at the end of its
// run (/proc/self/maps) as JSON: warm_no_llvm_test.cpp runs it twice.
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "kiln/cache/artifact_cache.hpp"
#include "kiln/cache/tuning_cache.hpp"
#include "kiln/core/options.hpp"
#include "kiln/kernels/tuning_target.hpp"
#include "kiln/tuner/tuner.hpp"

namespace {

// V = 1 naps 2 ms, V = 2 not at all: V = 2 wins.
constexpr const char* kSource = R"(
#include "kiln/cpu_kernel.h"
extern "C" int usleep(unsigned int);
namespace t {
template <int V>
void twice(const kiln::cpu::BlockContext&, const float* x, float* y, int n) {
  if (V == 1) usleep(2000);
  for (int i = 0; i < n; ++i) y[i] = x[i] * 2.0f + V;
}
}  // namespace t
)";

// The files this process maps whose name holds `part`.
std::set<std::string> mapped(const std::vector<std::string>& parts) {
  std::ifstream maps("/proc/self/maps");
  std::set<std::string> found;
  for (std::string line; std::getline(maps, line);) {
    const auto slash = line.find('/');
    if (slash == std::string::npos) continue;
    const std::string path = line.substr(slash);
    const std::string name = path.substr(path.rfind('/') + 1);
    for (const auto& p : parts)
      if (name.find(p) != std::string::npos) found.insert(name);
  }
  return found;
}

}  // namespace

int main() {
  using namespace kiln;
  auto target = open_tuning_target("cpu");
  if (!target) {
    std::cerr << target.error().describe() << "\n";
    return 3;
  }
  ArtifactCache artifacts(Options::global());
  TuningCache tunings(Options::global());
  Autotuner tuner(target->backend, &artifacts, &tunings);

  TunableKernel k;
  k.tmpl.name = "warm_child_twice";
  k.tmpl.source = kSource;
  k.tmpl.entry = "t::twice<{V}>";
  k.tmpl.space.param("V", {Value(std::int64_t{1}), Value(std::int64_t{2})});
  k.tmpl.space.default_config(Config{{"V", std::int64_t{1}}});
  k.launch = [](const Config&, const ArgList&) { return LaunchGeometry{}; };
  k.outputs = {"y"};

  const int n = 64;
  std::vector<float> x(n), y(n, 0.0f);
  for (int i = 0; i < n; ++i) x[i] = static_cast<float>(i);
  ArgList args = {Arg::of_tensor("x", x.data(), TensorArg::contiguous(DType::kF32, {n})),
                  Arg::of_tensor("y", y.data(), TensorArg::contiguous(DType::kF32, {n})),
                  Arg::of_scalar("n", n)};
  TuneOptions o;
  o.search.strategy = "exhaustive";
  o.measure.target_seconds = 0.001;
  o.measure.max_reps = 3;
  o.search.finalists = 0;
  auto r = tuner.run(k, args, *target->device, o);
  if (!r) {
    std::cerr << r.error().describe() << "\n";
    return 4;
  }
  const std::int64_t v = std::get<std::int64_t>(r->config.at("V"));
  bool correct = true;
  for (int i = 0; i < n; ++i) correct = correct && y[i] == x[i] * 2.0f + static_cast<float>(v);
  nlohmann::json out = {{"source", source_name(r->source)},
                        {"config", r->config.to_string()},
                        {"correct", correct},
                        {"compiler_maps", mapped({"libLLVM", "libclang-cpp", "kiln_cpu_backend"})},
                        {"libc_mapped", !mapped({"libc.so"}).empty()}};
  std::cout << out.dump() << std::endl;
  return 0;
}
