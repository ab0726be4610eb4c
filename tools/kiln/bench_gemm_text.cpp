#include "bench_gemm_text.hpp"

#include <cstdio>

#include "kiln/core/config.hpp"

namespace kiln::tool {

namespace {

std::string percent_of_peak(const nlohmann::json& fraction) {
  if (!fraction.is_number()) return "?";
  char text[16];
  std::snprintf(text, sizeof text, "%.0f%%", fraction.get<double>() * 100);
  return text;
}

}  // namespace

void print_gemm_bench_header(const std::string& device, const FmaPeak& peak,
                             const BlasBaselines& blas) {
  std::printf("kiln gemm_f32 against the fastest BLAS here, %d threads, %s\n", peak.threads,
              device.c_str());
  if (peak.gflops > 0) {
    std::printf("fp32 FMA peak: %.1f GFLOP/s (%s FMA loop on %d threads, measured now)\n",
                peak.gflops, peak.isa.c_str(), peak.threads);
  } else {
    std::printf("fp32 FMA peak: not measured (no AVX2 or AVX-512 FMA on this CPU)\n");
  }
  std::printf("BLAS libraries, each run in a process of its own:\n");
  for (const BlasBaseline& run : blas.runs) {
    std::printf("  [%d] %s, kernel %s: %s%s%s\n", run.id, run.name().c_str(), run.kernel().c_str(),
                run.worker.hello()["library"].get<std::string>().c_str(),
                run.note.empty() ? "" : "\n      ", run.note.c_str());
  }
  for (const auto& missing : blas.unavailable) {
    std::printf("  not used: %s (%s)\n", missing["label"].get<std::string>().c_str(),
                missing["why"].get<std::string>().c_str());
  }
}

void print_gemm_bench_size(const nlohmann::json& r) {
  std::printf("\nsize %s: kiln %.1f GFLOP/s (%s of peak)", r["shape"].get<std::string>().c_str(),
              r["kiln_gflops"].get<double>(), percent_of_peak(r["kiln_peak_fraction"]).c_str());
  if (r["baseline"].is_null()) {
    std::printf(", no BLAS computed this size correctly\n");
  } else {
    std::printf(", %.2fx the fastest BLAS, [%d] %s (%s)\n", r["ratio"].get<double>(),
                r["baseline"].get<int>(), r["baseline_name"].get<std::string>().c_str(),
                r["baseline_kernel"].get<std::string>().c_str());
  }
  if (!r["kiln_correct"].get<bool>())
    std::printf("  kiln's C differs from the reference by up to %g: check it\n",
                r["kiln_max_abs_err"].get<double>());
  std::printf("  tuning: %zu of %zu configs measured, %.1f s (%s); config %s\n",
              r["configs_measured"].get<std::size_t>(), r["space_size"].get<std::size_t>(),
              r["tune_seconds"].get<double>(), r["source"].get<std::string>().c_str(),
              Config::from_json(r["config"]).to_string().c_str());
  for (const auto& side : r["blas"]) {
    const std::string label = "[" + std::to_string(side["id"].get<int>()) + "] " +
                              side["name"].get<std::string>() + " (" +
                              side["kernel"].get<std::string>() + ")";
    if (side.contains("failed")) {
      std::printf("  %-50s no figure: %s\n", label.c_str(),
                  side["failed"].get<std::string>().c_str());
      continue;
    }
    const bool baseline = side["id"] == r["baseline"];
    std::printf("  %-50s %8.1f GFLOP/s %5s  kiln %.2fx%s\n", label.c_str(),
                side["gflops"].get<double>(), percent_of_peak(side["peak_fraction"]).c_str(),
                side["ratio"].get<double>(),
                baseline                        ? "  the baseline"
                : !side["eligible"].get<bool>() ? "  forced lesser kernel: not the baseline"
                                                : "");
  }
  std::fflush(stdout);
}

}  // namespace kiln::tool
