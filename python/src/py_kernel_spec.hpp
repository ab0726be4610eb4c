// A kernel spec (the dict python/kiln/_spec.py builds from a kiln.Kernel:
// source, entry, signature, space, launch rule, argument lists, hooks)
// read into the native kernel that kiln.autotune tunes and that a
// fixed-config call runs: one reader for both, so both check a spec the
// same way and fail with the same errors. The signature and the tensor
// lists go through the kernel description's parser and builder
// (kiln/kernels/kernel_description.hpp), as a JSON spec's do; what is
// Python's alone (callables, Python values) is layered on top.
#pragma once

#include <nanobind/nanobind.h>

#include <string>
#include <utility>
#include <vector>

#include "kiln/kernels/kernel_description.hpp"
#include "kiln/kernels/tuning_target.hpp"
#include "kiln/tuner/tuner.hpp"
#include "py_args.hpp"
#include "py_hooks.hpp"

namespace kiln::py {

struct KernelSpec {
  // The description (the one value C++, JSON specs and Python share), its
  // launch rule left to the hooks and its backend to `backend` (Python's
  // "auto" picks it per call); `kernel` is what the tuner runs of it.
  KernelDescription desc;
  std::string backend;  // "auto", "cpu" or "cuda"
  TunableKernel kernel;
  std::vector<std::string> key_names;
  std::vector<bool> key_mask;       // params[i] enters the key
  std::vector<bool> named_outputs;  // outputs= names params[i] (empty: outputs= not given)
  std::vector<std::pair<std::size_t, const char*>> written;  // argument index, why Kiln writes it
  ParamBuckets buckets;                // kernel.buckets by parameter (empty: none)
  std::vector<nanobind::object> keep;  // the bucket maps the kernel's rules call
  // The launch rule's and the hooks' Python side. The kernel's callables
  // point at it: a KernelSpec stays where it was read.
  Hooks hooks;

  KernelSpec() = default;
  KernelSpec(const KernelSpec&) = delete;
  KernelSpec& operator=(const KernelSpec&) = delete;

  const std::string& name() const { return desc.tmpl.name; }
  const std::vector<KernelParam>& params() const { return desc.signature; }
  // The backend of a call: the declared one, or the tensors' with "auto";
  // an error for tensors on another backend's device.
  std::string kind_from(const CallArgs& ca) const;
  // The call's arguments by name (the launch rule's meta).
  nanobind::dict named_args(nanobind::handle args) const;
  // A call's stream= (None when not given); any other keyword is refused:
  // the arguments are positional.
  nanobind::handle stream_keyword(nanobind::kwargs kwargs) const;
};

// Reads `spec` into `ks`: the template and signature, the space, the
// launch rule, the argument lists and the pruning hooks, each checked as
// it is read (kiln.ConfigError naming what is wrong).
void read_kernel_spec(nanobind::dict spec, KernelSpec& ks);

// The tuning options of `spec`: search, budget, timing, the output check,
// the benchmark hooks.
TuneOptions read_tune_options(nanobind::dict spec, KernelSpec& ks);

// pre_hook, post_hook and do_bench of `spec` (None: not given), with
// Triton's meaning, as the tuner's benchmark hooks (o.hooks).
void read_bench_hooks(nanobind::dict spec, KernelSpec& ks, TuneOptions& o);

}  // namespace kiln::py
