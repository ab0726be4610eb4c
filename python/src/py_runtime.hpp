// One Kiln per backend per process, opened on first use: the tuning target
// (compiler, device), the caches and the tuner every kiln.Kernel and
// kiln.compile of that backend share. A forked child drops its parent's
// (their threads did not survive the fork) and opens its own.
#pragma once

#include <nanobind/nanobind.h>

#include <memory>
#include <string>

#include "kiln/cache/artifact_cache.hpp"
#include "kiln/cache/tuning_cache.hpp"
#include "kiln/core/error.hpp"
#include "kiln/kernels/tuning_target.hpp"
#include "kiln/tuner/tuner.hpp"

namespace kiln::py {

struct Runtime {
  TuningTarget target;
  std::unique_ptr<ArtifactCache> artifacts;
  std::unique_ptr<TuningCache> tunings;
  std::unique_ptr<Autotuner> tuner;
  Device& device() { return *target.device; }
};

// "cpu", "cuda" or "auto" (CUDA when a device is present, else the CPU).
std::string parse_backend(const std::string& name);
// The runtime of `kind`, opened now if it is not yet; throws kiln::Error
// (kUnavailable) saying what is missing and the fix. Call without the GIL.
std::shared_ptr<Runtime> runtime(std::string kind);

// The exception of kiln.errors for `info`, not raised (with the GIL).
nanobind::object exception_of(const ErrorInfo& info);
// Sets the Python exception of kiln.errors for `info` (with the GIL).
void set_error(const ErrorInfo& info);
// Raises the Python exception of kiln.errors for `info` (never returns).
[[noreturn]] void raise(const ErrorInfo& info);
// Unwraps a Result or raises its error as a Python exception.
template <class T>
T take(Result<T>&& r) {
  if (!r.ok()) raise(r.error());
  return std::move(*r);
}
inline void check(const Status& s) {
  if (!s.ok()) raise(s.error());
}

// Bumped in a forked child: objects holding loaded kernels compare it to
// the value they saw and reload from this process's runtime when it moved.
std::uint64_t fork_generation();

void register_runtime(nanobind::module_& m);

}  // namespace kiln::py
