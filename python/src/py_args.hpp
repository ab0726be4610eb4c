// The conversion of one call's Python arguments into Kiln's ArgList, by
// the kernel's signature (kiln/kernels/kernel_description.hpp): tensors
// through DLPack (numpy, PyTorch, CuPy, JAX), scalars by their declared
// type, raw pointers as an address or an (address, bytes) pair. Each
// mismatch is an error naming the argument.
#pragma once

#include <nanobind/nanobind.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kiln/core/tensor.hpp"
#include "kiln/device/device.hpp"
#include "kiln/kernels/kernel_description.hpp"
#include "kiln/tuner/args.hpp"

namespace kiln::py {

// One call converted: the ArgList, and a hash of what selects a tuning
// record (tensors' dtype, shape, stride pattern, device; the values of
// scalars named in `key`).
struct CallArgs {
  ArgList args;
  std::string key;  // the bytes of what selects a record (compared whole, never hashed alone)
  DeviceRef device{"cpu", 0};
  bool any_tensor = false;
};

// Bucket rules by parameter index: each with the dim it buckets (-1: a
// scalar's value). Empty: no rules.
using ParamBuckets = std::vector<std::vector<std::pair<int, const KeyBucket*>>>;
// The size the key holds for parameter `i`'s size `v` at `dim`: its
// representative when a rule names it, else `v`.
std::int64_t key_size(const ParamBuckets& buckets, std::size_t i, int dim, std::int64_t v);

// `key_mask[i]`: scalar i enters the key; `buckets` (may be empty) put
// representatives in the key in place of the sizes they name;
// `named_outputs[i]` (may be empty): outputs= names parameter i, which the
// kernel may then write even when const. A JAX array (immutable) where the
// kernel may write is a kiln.ArgumentError naming it and the fix, unless
// `inferred` (params made from the arguments, as choose_one's: nothing is
// known of what is written, as kiln.compile without a signature). Tensors
// are imported by DLPack 1.x (__dlpack__(max_version=...), the legacy call
// for producers without it); a read-only one (the buffer protocol's or
// DLPack's flag) as a T* gets a kiln.ReadOnlyWarning. Needs the GIL.
CallArgs convert_args(const std::vector<KernelParam>& params, const std::vector<bool>& key_mask,
                      nanobind::handle args, const char* kernel, const ParamBuckets& buckets = {},
                      const std::vector<bool>& named_outputs = {}, bool inferred = false);

// Without a signature (kiln.compile): tensors by DLPack, bool, int (i32, or
// i64 when it does not fit), float (f32), numpy scalars by their dtype, and
// (address, bytes) pairs as raw pointers.
KernelArgs infer_and_pack(nanobind::handle args, const char* kernel);
// Refuses a read-only array (a numpy view of a bytes object, an array with
// writeable=False, a JAX array) passed as `p`, an argument Kiln writes (an
// autotuned kernel's restore_value, reset_to_zero): kiln.ArgumentError
// naming it, `role` and the fix. Anything else passes.
void check_writable(nanobind::handle obj, const KernelParam& p, const char* kernel,
                    const char* role);

// An argument as Python code sees it (a reference, a runner): a numpy
// array over its memory (a DLPack array for a CUDA tensor), a number for a
// scalar, an int for a raw pointer. Needs the GIL.
nanobind::object arg_view(const Arg& a);

// A Python int as an int64_t; else kiln.ConfigError naming `what` (e.g.
// "config parameter BLOCK"), the value and the int64 range. nb::cast would
// throw a bare std::bad_cast for an int of more than 64 bits.
std::int64_t int64_of(nanobind::handle v, const std::string& what);

// The stream handle of a `stream=` value: None, an int, or an object with
// `cuda_stream` / `__cuda_stream__`.
std::optional<std::uintptr_t> stream_handle(nanobind::handle stream);

}  // namespace kiln::py
