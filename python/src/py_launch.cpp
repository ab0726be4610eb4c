// See py_launch.hpp.
#include "py_launch.hpp"

#include <nanobind/stl/string.h>

#include <limits>
#include <optional>
#include <string>

#include "kiln/core/error.hpp"
#include "py_args.hpp"

namespace nb = nanobind;

namespace kiln::py {

namespace {

// An integer: a Python int or anything with __index__ (numpy's and
// PyTorch's integer scalars, as Triton takes them); never a bool or float.
bool is_index(nb::handle v) {
  return !nb::isinstance<nb::bool_>(v) && PyIndex_Check(v.ptr());
}

// The value of such an integer, when it fits a long long.
std::optional<long long> index_value(nb::handle v) {
  if (!is_index(v)) return std::nullopt;
  nb::object index = nb::steal(PyNumber_Index(v.ptr()));
  long long x = 0;
  if (!index.is_valid()) {
    PyErr_Clear();
    return std::nullopt;
  }
  if (!nb::try_cast(index, x, false)) return std::nullopt;
  return x;
}

std::uint32_t extent(nb::handle v, const char* what, bool empty_ok) {
  const std::optional<long long> x = index_value(v);
  const long long least = empty_ok ? 0 : 1;
  if (!x || *x < least || *x > std::numeric_limits<std::uint32_t>::max()) {
    throw Error(ErrorCode::kInvalidArgument,
                std::string(what) + " has " + nb::cast<std::string>(nb::repr(v)) +
                    (empty_ok ? ": each extent is an integer from 0 (launch nothing) to 2^32-1"
                              : ": each extent is an integer from 1 to 2^32-1"));
  }
  return static_cast<std::uint32_t>(*x);
}

}  // namespace

Dim3 to_dim3(nb::handle value, const char* what, bool empty_ok) {
  Dim3 d;
  if (is_index(value)) {
    d.x = extent(value, what, empty_ok);
    return d;
  }
  if (!nb::isinstance<nb::tuple>(value) && !nb::isinstance<nb::list>(value)) {
    throw Error(ErrorCode::kInvalidArgument,
                std::string(what) + "=" + nb::cast<std::string>(nb::repr(value)) +
                    " is not a launch extent: give an int or a tuple of 1 to 3 ints");
  }
  const std::size_t n = nb::len(value);
  if (n < 1 || n > 3) {
    throw Error(ErrorCode::kInvalidArgument, std::string(what) + "=" +
                                                 nb::cast<std::string>(nb::repr(value)) + " has " +
                                                 std::to_string(n) + " extents: give 1 to 3");
  }
  std::uint32_t* dims[3] = {&d.x, &d.y, &d.z};
  for (std::size_t i = 0; i < n; ++i) *dims[i] = extent(value[i], what, empty_ok);
  return d;
}

std::size_t to_shared_bytes(nb::handle value) {
  const std::optional<long long> bytes = index_value(value);
  if (!bytes || *bytes < 0) {
    throw Error(ErrorCode::kInvalidArgument,
                "shared_bytes is " + nb::cast<std::string>(nb::repr(value)) +
                    ": give a non-negative int (or, for kiln.Kernel, a callable of meta "
                    "returning one)");
  }
  return static_cast<std::size_t>(*bytes);
}

namespace {

// PyTorch's current stream on the device of the first torch tensor among
// `args`, or nullopt (no torch tensor, or torch not imported).
std::optional<std::uintptr_t> torch_current_stream(nb::handle args) {
  if (!args.is_valid()) return std::nullopt;
  for (nb::handle a : args) {
    if (std::string(Py_TYPE(a.ptr())->tp_name) != "Tensor" || !nb::hasattr(a, "is_cuda")) continue;
    if (!nb::cast<bool>(a.attr("is_cuda"))) continue;
    nb::object torch = nb::module_::import_("torch");
    nb::object s = torch.attr("cuda").attr("current_stream")(a.attr("device"));
    return nb::cast<std::uintptr_t>(s.attr("cuda_stream"));
  }
  return std::nullopt;
}

}  // namespace

std::optional<Stream> to_stream(Device& device, nb::handle stream, nb::handle args) {
  std::optional<std::uintptr_t> handle = stream_handle(stream);
  if (!handle && device.properties().ref.backend == "cuda") {
    handle = torch_current_stream(args);
  }
  if (!handle) return std::nullopt;
  if (device.properties().ref.on_host() && *handle == 0) return std::nullopt;
  auto s = device.wrap_stream(*handle);
  if (!s.ok()) throw Error(s.error());
  return std::move(*s);
}

}  // namespace kiln::py
