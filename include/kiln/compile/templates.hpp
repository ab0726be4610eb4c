// The kernel templates shipped with Kiln, embedded into the library at build
// time (an installed Kiln needs no source tree). docs/templates.md describes
// each one and its config space.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "kiln/compile/kernel.hpp"

namespace kiln {

// "gemm_f16", "gemm_bf16", "gemm_f16_cccl", ... in a stable order.
std::vector<std::string> shipped_template_names();

// The template by name. Throws kiln::Error (kNotFound) listing the names
// when there is none.
const KernelTemplate& shipped_template(std::string_view name);

// The raw text of an embedded file of templates/, e.g. "cuda/gemm_mma.cu".
// Throws kiln::Error (kNotFound) listing the files when there is none.
std::string_view embedded_template_file(std::string_view path);
std::vector<std::string> embedded_template_paths();

// Launch geometry of the shipped GEMMs (gemm_f16, gemm_bf16, gemm_f16_cccl)
// for a config: kernel arguments (A, B, C, M, N, K), block = gemm_threads
// threads, grid = (ceil(N/BN), ceil(M/BM)), dynamic shared memory =
// gemm_shared_bytes (above 48 KiB it needs the function attribute
// MAX_DYNAMIC_SHARED_SIZE_BYTES raised).
int gemm_threads(const Config& config);
std::size_t gemm_shared_bytes(const Config& config);

}  // namespace kiln
