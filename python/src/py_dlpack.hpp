// Tensors from Python: the DLPack import (numpy, JAX, PyTorch, CuPy, any
// producer of the array API's __dlpack__, else the buffer protocol) and
// what Kiln learns of a tensor's writability. Needs the GIL.
#pragma once

#include <nanobind/nanobind.h>

#include <optional>
#include <string>

#include "kiln/core/tensor.hpp"

namespace kiln::py {

// A DLPack tensor as Kiln's TensorArg plus its address; nullopt when `obj`
// is not one.
struct DlpackTensor {
  void* data = nullptr;
  TensorArg info;
  std::optional<DType> dtype;
  std::string dtype_text;
  bool read_only = false;  // the producer's DLPack 1.x export says so
};

// `obj` as a tensor; nullopt when it is not one. Asks for a DLPack 1.x
// capsule (__dlpack__(max_version=...)), which carries the read-only flag,
// and the legacy way for a producer without max_version.
std::optional<DlpackTensor> as_tensor(nanobind::handle obj);

// Whether `obj` exports a read-only buffer (the buffer protocol's flag).
bool read_only_buffer(nanobind::handle obj);

// Whether `obj` is a JAX array (immutable), once the program imported jax.
bool is_jax_array(nanobind::handle obj);

}  // namespace kiln::py
