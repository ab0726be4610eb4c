// The compiler behind `kiln compile` and `kiln bench compile`: NVRTC where
// the CUDA backend is built, in this process or in worker processes of
// Kiln's one worker program (`kiln-bench-worker --compile cuda`).
#pragma once

#include <memory>
#include <string>

#include "kiln/compile/compile_pool.hpp"

namespace kiln::tool {

// `requested` when given, else kiln::cuda::default_arch(); an error when
// neither (no GPU and no KILN_ARCH) or without the CUDA backend.
Result<std::string> resolve_arch(const std::string& requested);

// A fresh NVRTC compiler, or with `processes` one in a worker process.
// Throws kiln::Error when the CUDA backend is not built or, with
// `processes`, no worker program is found: it is the hook of
// CompileBenchSettings, which returns a compiler.
std::shared_ptr<Compiler> make_backend_compiler(bool pch, bool processes);
// One compiler shared by thread workers, or with `processes` a factory
// making one worker process per worker: an error naming where it looked
// and the fix when no worker program is found. Throws kiln::Error when the
// CUDA backend is not built.
Result<CompilerFactory> compiler_factory(bool pch, bool processes);

// The body of the hidden `kiln compile-worker`, kept for scripts that start
// it: becomes (exec) the worker program with --compile cuda. Returns only
// when that fails, with the exit status.
int serve_worker(bool pch);

}  // namespace kiln::tool
