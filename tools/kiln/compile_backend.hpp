// The compiler behind `kiln compile` and `kiln bench compile`: the
// registered backend's (kiln/device/backend.hpp), in this process or in
// worker processes of Kiln's one worker program
// (`kiln-bench-worker --compile <backend>`).
#pragma once

#include <memory>
#include <string>

#include "kiln/compile/compile_pool.hpp"
#include "kiln/device/backend.hpp"

namespace kiln::tool {

// `requested` when given, else the backend's default arch (KILN_ARCH, else
// its first device's); an error when neither (no GPU and no KILN_ARCH) or
// without the backend.
Result<std::string> resolve_arch(const std::string& requested, const std::string& kind = "cuda");

// A fresh compiler of `kind`, or with `processes` one in a worker process.
// `pch` off turns NVRTC's precompiled headers off. Throws kiln::Error when
// the backend is not built or, with `processes`, no worker program is
// found: it is the hook of CompileBenchSettings, which returns a compiler.
std::shared_ptr<Compiler> make_backend_compiler(bool pch, bool processes,
                                                const std::string& kind = "cuda");
// One compiler shared by thread workers, or with `processes` a factory
// making one worker process per worker: an error naming the fix when the
// backend is not built or no worker program is found.
Result<CompilerFactory> compiler_factory(bool pch, bool processes,
                                         const std::string& kind = "cuda");

// The body of the hidden `kiln compile-worker`, kept for scripts that start
// it: becomes (exec) the worker program with --compile <backend>. Returns
// only when that fails, with the exit status.
int serve_worker(bool pch, const std::string& kind = "cuda");

}  // namespace kiln::tool
