// `kiln bench gemm`'s report as text: the FMA peak and the BLAS runs (each
// library's kernel and what kiln did about its kernel variable), then a
// block per size naming every library's kernel beside its figure.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "blas_baselines.hpp"
#include "fma_peak.hpp"

namespace kiln::tool {

void print_gemm_bench_header(const std::string& device, const FmaPeak& peak,
                             const BlasBaselines& blas);
// `row`: one element of the JSON report's "sizes" (cmd_bench_gemm.cpp).
void print_gemm_bench_size(const nlohmann::json& row);

}  // namespace kiln::tool
