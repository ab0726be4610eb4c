// The compiler behind `kiln compile` and `kiln bench compile`: the
// registered backend's (kiln/runtime/backend.hpp), in this process or in
// worker processes that run this same executable's `compile-worker`.
#pragma once

#include <memory>
#include <string>

#include "kiln/compile/compile_pool.hpp"
#include "kiln/runtime/backend.hpp"

namespace kiln::tool {

// `requested` when given, else the backend's default arch (KILN_ARCH, else
// its first device's); an error when neither (no GPU and no KILN_ARCH) or
// without the backend.
Result<std::string> resolve_arch(const std::string& requested, DeviceKind kind = DeviceKind::kCuda);

// A fresh compiler of `kind` (one shared by thread workers), or with
// `processes` a factory making one worker process per worker. `pch` off
// turns NVRTC's precompiled headers off. Throws kiln::Error when the
// backend is not built.
std::shared_ptr<Compiler> make_backend_compiler(bool pch, bool processes,
                                                DeviceKind kind = DeviceKind::kCuda);
CompilerFactory compiler_factory(bool pch, bool processes, DeviceKind kind = DeviceKind::kCuda);

// The body of `kiln compile-worker`: serves stdin/stdout until closed.
int serve_worker(bool pch, DeviceKind kind = DeviceKind::kCuda);

}  // namespace kiln::tool
