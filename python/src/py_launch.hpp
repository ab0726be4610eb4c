// Launch geometry and streams from Python values, shared by compiled and
// autotuned kernels.
#pragma once

#include <nanobind/nanobind.h>

#include <optional>

#include "kiln/device/device.hpp"

namespace kiln::py {

// An int or a tuple/list of 1-3 positive ints; `what` ("grid") names it in
// the error. With `empty_ok` (grids) an extent may be 0: a launch over no
// blocks, which the callers skip, as Triton does (a grid of cdiv(n, BLOCK)
// with n = 0, an empty batch, is a no-op, not an error).
Dim3 to_dim3(nanobind::handle value, const char* what, bool empty_ok = false);
// A grid with a 0 extent: nothing to launch.
inline bool empty_grid(const Dim3& grid) {
  return grid.x == 0 || grid.y == 0 || grid.z == 0;
}
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
