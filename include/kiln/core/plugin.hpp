// Plugins: the parts of Kiln that bring a heavy library (the CPU backend's
// LLVM and Clang, Open MPI, hiredis and OpenSSL) built as shared objects
// that a program dlopens when a command first needs them, so that a
// process that never compiles, distributes or talks to Redis maps none of
// them (docs/architecture.md, "Plugins"). A plugin resolves its Kiln
// symbols against the program that loads it: the `kiln` command exports
// them; the Python package's shared libkiln holds them.
#pragma once

#include <string>
#include <vector>

#include "kiln/core/error.hpp"

namespace kiln {

enum class Plugin {
  kCpuBackend,  // libkiln_cpu_backend.so, $KILN_CPU_BACKEND_PLUGIN
  kMpi,         // libkiln_mpi.so, $KILN_MPI_PLUGIN
  kRedis,       // libkiln_redis.so, $KILN_REDIS_PLUGIN
};

// Where `which` may be, searched in this order (as the worker program is
// found, lib/tuner/worker_find.cpp): the path in its variable when set
// (then only that), beside the shared library or executable holding
// `anchor` (a function of the code that loads it), this build tree's, the
// installed one (<libdir>/kiln/), beside the running executable, and in
// <libdir>/kiln/ of the prefix holding it (an installed tree moved).
std::vector<std::string> plugin_places(Plugin which, const void* anchor);

// The address of the plugin's entry symbol, the plugin dlopen'ed on the
// first call (RTLD_NOW, RTLD_NODELETE: what it made outlives any handle)
// and the answer kept for the process. Errors name every path tried, the
// loader's message and the fix.
Result<void*> load_plugin(Plugin which, const void* anchor);

}  // namespace kiln
