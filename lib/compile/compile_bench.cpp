// The compile benchmark (`kiln bench compile`, bench/compile_bench.cpp):
// variants side by side in interleaved rounds, and the floor they imply.
#include <algorithm>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>

#include "kiln/compile/compile_run.hpp"
#include "kiln/compile/templates.hpp"
#include "kiln/core/error.hpp"

namespace kiln {

std::vector<BenchVariant> compile_bench_variants(int cores, bool processes, bool sweep) {
  const std::size_t g = resolve_group_size(0);
  std::vector<BenchVariant> v = {
      {"naive", 1, 1, false, false},    {"threads", 1, cores, false, false},
      {"grouping", g, 1, false, false}, {"pch", 1, 1, true, false},
      {"kiln", g, cores, true, false},  {"kiln+processes", g, cores, true, true},
  };
  if (processes) v.push_back({"threads+processes", 1, cores, false, true});
  if (sweep) {
    for (std::size_t size : {2, 4, 16}) {
      if (size == g) continue;
      v.push_back({"kiln G=" + std::to_string(size), size, cores, true, false});
    }
    v.push_back({"grouping+threads", g, cores, false, false});
    v.push_back({"grouping+pch", g, 1, true, false});
  }
  return v;
}

nlohmann::json compile_floor(double naive_seconds, double grouping_seconds, std::size_t configs,
                             std::size_t programs, int workers) {
  if (configs <= programs || workers < 1 || naive_seconds <= grouping_seconds) return nullptr;
  const double n = static_cast<double>(configs);
  const double front_end = (naive_seconds - grouping_seconds) / (n - static_cast<double>(programs));
  const double back_end = naive_seconds / n - front_end;
  if (back_end <= 0) return nullptr;
  const double floor = front_end + n * back_end / workers;
  return {{"seconds", floor},
          {"front_end_seconds", front_end},
          {"back_end_seconds_per_config", back_end},
          {"workers", workers},
          {"speedup_vs_naive", naive_seconds / floor}};
}

namespace {

struct VariantRuns {
  std::vector<double> walls;
  CompileRun last;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

CompileRun run_variant(const CompileBenchSettings& settings, const BenchVariant& v,
                       const KernelTemplate& kernel, const std::vector<Specialization>& specs) {
  CompileRunSettings rs;
  rs.arch = settings.arch;
  rs.group_size = v.group_size;
  rs.workers = v.workers;
  rs.context = settings.context;
  // A shared thread-safe compiler for thread workers; one worker process
  // per worker otherwise. Made fresh per run: no PCH carried over.
  if (v.processes) {
    rs.factory = [&](int) { return settings.make_compiler(v.pch, true); };
  } else {
    auto shared = settings.make_compiler(v.pch, false);
    rs.factory = [shared](int) { return shared; };
  }
  return compile_all(kernel, specs, rs);
}

nlohmann::json variant_json(const BenchVariant& v, const VariantRuns& runs, std::size_t configs) {
  const double wall = median(runs.walls);
  return {{"name", v.name},
          {"group_size", v.group_size},
          {"workers", v.workers},
          {"pch", v.pch},
          {"processes", v.processes},
          {"wall_seconds", wall},
          {"round_seconds", runs.walls},
          {"first_result_seconds", runs.last.first_result_seconds},
          {"seconds_per_config", wall / static_cast<double>(configs)},
          {"ok", runs.last.ok},
          {"failed", runs.last.failed},
          {"programs", runs.last.programs}};
}

const nlohmann::json* find_variant(const nlohmann::json& variants, const std::string& name) {
  for (const auto& vj : variants) {
    if (vj["name"] == name) return &vj;
  }
  return nullptr;
}

// Speedups, the floor and each variant's fraction of it, from the medians.
void add_ratios(nlohmann::json& kj, std::size_t configs) {
  auto& variants = kj["variants"];
  const nlohmann::json* naive = find_variant(variants, "naive");
  const nlohmann::json* grouping = find_variant(variants, "grouping");
  const nlohmann::json* kiln = find_variant(variants, "kiln");
  const nlohmann::json* processes = find_variant(variants, "kiln+processes");
  if (naive == nullptr) return;
  const double naive_s = (*naive)["wall_seconds"];
  if (grouping != nullptr && kiln != nullptr) {
    kj["floor"] = compile_floor(naive_s, (*grouping)["wall_seconds"], configs,
                                (*grouping)["programs"], (*kiln)["workers"]);
  }
  if (kiln != nullptr) kj["naive_over_kiln"] = naive_s / (*kiln)["wall_seconds"].get<double>();
  if (kiln != nullptr && processes != nullptr) {
    kj["processes_over_threads"] =
        (*processes)["wall_seconds"].get<double>() / (*kiln)["wall_seconds"].get<double>();
  }
  const double floor_s = kj["floor"].is_object() ? kj["floor"]["seconds"].get<double>() : 0.0;
  for (auto& vj : variants) {
    const double wall = vj["wall_seconds"];
    vj["speedup_vs_naive"] = naive_s / wall;
    if (floor_s > 0) vj["fraction_of_floor"] = floor_s / wall;
  }
}

}  // namespace

nlohmann::json run_compile_bench(const CompileBenchSettings& settings) {
  if (!settings.make_compiler) {
    throw Error(ErrorCode::kInvalidArgument, "run_compile_bench: make_compiler is empty");
  }
  const int rounds = std::max(1, settings.rounds);
  nlohmann::json report = {
      {"arch", settings.arch}, {"rounds", rounds}, {"kernels", nlohmann::json::object()}};
  for (const auto& name : settings.kernels) {
    const KernelTemplate& kernel = shipped_template(name);
    std::vector<Specialization> specs = kernel.specialize_all();
    if (settings.max_configs > 0 && specs.size() > settings.max_configs) {
      specs.resize(settings.max_configs);
    }
    const std::size_t count = settings.variants.size();
    std::vector<VariantRuns> runs(count);
    for (int r = 0; r < rounds; ++r) {
      for (std::size_t i = 0; i < count; ++i) {
        const std::size_t k = (i + static_cast<std::size_t>(r)) % count;
        const BenchVariant& v = settings.variants[k];
        runs[k].last = run_variant(settings, v, kernel, specs);
        runs[k].walls.push_back(runs[k].last.wall_seconds);
        if (settings.progress) {
          char line[256];
          std::snprintf(line, sizeof line,
                        "%-16s round %d/%d  %-20s G=%-3zu workers=%-2d pch=%d  %7.2f s  first "
                        "%5.2f s",
                        name.c_str(), r + 1, rounds, v.name.c_str(), v.group_size, v.workers,
                        v.pch ? 1 : 0, runs[k].last.wall_seconds,
                        runs[k].last.first_result_seconds);
          settings.progress(line);
        }
      }
    }
    nlohmann::json kj = {{"configs", specs.size()}, {"variants", nlohmann::json::array()}};
    for (std::size_t k = 0; k < count; ++k) {
      kj["variants"].push_back(variant_json(settings.variants[k], runs[k], specs.size()));
    }
    add_ratios(kj, specs.size());
    report["kernels"][name] = std::move(kj);
  }
  return report;
}

}  // namespace kiln
