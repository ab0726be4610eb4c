// The BLAS libraries `kiln bench gemm` compares Kiln's GEMM with, each run
// in a worker process (blas_worker.hpp) at its native kernel; where the
// environment sets the variable that forces a library's kernel
// (OPENBLAS_CORETYPE, BLIS_ARCH_TYPE, MKL_ENABLE_INSTRUCTIONS), that run
// too, reported beside it, and never the baseline when its kernel is a
// lesser ISA than the native one (docs/benchmarks.md).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "blas_worker.hpp"

namespace kiln::tool {

struct BlasCandidate {
  std::string label;               // "system OpenBLAS", "numpy's OpenBLAS"; "" for --blas
  std::vector<std::string> names;  // tried in order until one opens: loader names or paths
  std::string found_by;            // the Python whose site-packages held it, or ""
};

// Debian's OpenBLAS, BLIS and MKL by their library names, and the OpenBLAS
// that numpy (or scipy) bundles, by path, for each Python found: python3 in
// PATH, $VIRTUAL_ENV's, ./.venv's and the source tree's .venv when kiln is
// build/bin/kiln.
std::vector<BlasCandidate> find_blas_candidates();

struct BlasBaseline {
  int id = 0;  // 1, 2, ...: how the report names it
  BlasCandidate candidate;
  BlasRun run = BlasRun::kNative;
  BlasWorker worker;
  bool eligible = true;  // may be the headline's baseline: not a forced lesser ISA
  std::string note;      // what kiln did about its kernel variable, in words

  // "system OpenBLAS 0.3.21": the label (the flavor for --blas) and version.
  std::string name() const;
  const std::string& kernel() const;
  nlohmann::json to_json() const;
};

struct BlasBaselines {
  std::vector<BlasBaseline> runs;
  nlohmann::json unavailable = nlohmann::json::array();  // [{"label", "library", "why"}]
};

// Starts every candidate's native run, and its environment run where the
// environment forces its kernel (dropped when it gives the native kernel).
// The same library file found twice runs once.
BlasBaselines start_blas_baselines(const std::vector<BlasCandidate>& candidates, int threads);

}  // namespace kiln::tool
