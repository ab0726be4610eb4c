// A kernel's signature and the conversion of one call's Python arguments
// into Kiln's ArgList: tensors through DLPack (numpy, PyTorch, CuPy, JAX),
// scalars by their declared type, raw pointers as an address or an
// (address, bytes) pair. Each mismatch is an error naming the argument.
#pragma once

#include <nanobind/nanobind.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kiln/core/tensor.hpp"
#include "kiln/device/device.hpp"
#include "kiln/tuner/args.hpp"

namespace kiln::py {

struct Param {
  enum class Kind { kTensor, kScalar, kPointer };
  std::string name;
  Kind kind = Kind::kScalar;
  DType dtype = DType::kF32;       // kTensor: element type
  ArgType scalar = ArgType::kI32;  // kScalar: the C type
  std::string type_text;           // as written, less a leading const: "f32*", "i32"
  bool read_only = false;          // "const T*": the kernel only reads it
};

// Parses ["a: f32", "x: f32*", "n: i32", "ws: void*"]; throws kiln::Error
// naming the entry and the types it knows.
std::vector<Param> parse_signature(const std::vector<std::string>& entries);

// One call converted: the ArgList, and a hash of what selects a tuning
// record (tensors' dtype, shape, stride pattern, device; the values of
// scalars named in `key`).
struct CallArgs {
  ArgList args;
  std::string key;  // the bytes of what selects a record (compared whole, never hashed alone)
  DeviceRef device{"cpu", 0};
  bool any_tensor = false;
};

// `key_mask[i]`: scalar i enters the key. Needs the GIL.
CallArgs convert_args(const std::vector<Param>& params, const std::vector<bool>& key_mask,
                      nanobind::handle args, const char* kernel);

// Without a signature (kiln.compile): tensors by DLPack, bool, int (i32, or
// i64 when it does not fit), float (f32), numpy scalars by their dtype, and
// (address, bytes) pairs as raw pointers.
KernelArgs infer_and_pack(nanobind::handle args, const char* kernel);
// Refuses a read-only array (a numpy view of a bytes object, an array with
// writeable=False) passed as `p`, an argument Kiln writes (an autotuned
// kernel's restore_value, reset_to_zero): kiln.ArgumentError
// naming it, `role` and the fix. Anything else passes.
void check_writable(nanobind::handle obj, const Param& p, const char* kernel, const char* role);

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
