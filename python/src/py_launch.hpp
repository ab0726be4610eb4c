// Launch geometry and streams from Python values, shared by compiled and
// autotuned kernels.
#pragma once

#include <nanobind/nanobind.h>

#include <optional>

#include "kiln/runtime/device.hpp"

namespace kiln::py {

// An int or a tuple/list of 1-3 positive ints; `what` ("grid") names it in
// the error.
Dim3 to_dim3(nanobind::handle value, const char* what);
// Dynamic shared memory in bytes: a non-negative integer (an error naming
// the value otherwise).
std::size_t to_shared_bytes(nanobind::handle value);
// `stream=` as a Stream of `device` (nullopt: the default stream); an error
// for a stream on a device that takes none. Without one, on CUDA, when an
// argument in `args` is a PyTorch tensor: PyTorch's current stream, as a
// PyTorch user expects.
std::optional<Stream> to_stream(Device& device, nanobind::handle stream,
                                nanobind::handle args = nanobind::handle());

}  // namespace kiln::py
