// arg_view and int64_of: see py_args.hpp.
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>

#include <limits>

#include "kiln/core/error.hpp"
#include "py_args.hpp"

namespace nb = nanobind;

namespace kiln::py {

nb::object arg_view(const Arg& a) {
  if (a.is_tensor) {
    std::vector<std::size_t> shape(a.tensor.shape.begin(), a.tensor.shape.end());
    std::vector<std::int64_t> strides = a.tensor.strides;
    nb::dlpack::dtype dt;
    switch (a.tensor.dtype) {
      case DType::kF16:
        dt = nb::dtype<std::uint16_t>();
        dt.code = (uint8_t)nb::dlpack::dtype_code::Float;
        break;
      case DType::kBF16:
        dt = nb::dtype<std::uint16_t>();
        dt.code = (uint8_t)nb::dlpack::dtype_code::Bfloat;
        break;
      case DType::kF32:
        dt = nb::dtype<float>();
        break;
      case DType::kF64:
        dt = nb::dtype<double>();
        break;
      case DType::kI8:
        dt = nb::dtype<std::int8_t>();
        break;
      case DType::kU8:
        dt = nb::dtype<std::uint8_t>();
        break;
      case DType::kI16:
        dt = nb::dtype<std::int16_t>();
        break;
      case DType::kI32:
        dt = nb::dtype<std::int32_t>();
        break;
      case DType::kI64:
        dt = nb::dtype<std::int64_t>();
        break;
      case DType::kBool:
        dt = nb::dtype<bool>();
        break;
    }
    if (a.tensor.device.on_host()) {
      return nb::cast(nb::ndarray<nb::numpy>(a.data, shape.size(), shape.data(), nb::handle(),
                                             strides.data(), dt, nb::device::cpu::value),
                      nb::rv_policy::reference);
    }
    return nb::cast(nb::ndarray<>(a.data, shape.size(), shape.data(), nb::handle(), strides.data(),
                                  dt, nb::device::cuda::value, a.tensor.device.index),
                    nb::rv_policy::reference);
  }
  return std::visit(
      [](auto v) -> nb::object {
        if constexpr (std::is_same_v<decltype(v), void*>) {
          return nb::int_(reinterpret_cast<std::uintptr_t>(v));
        } else {
          return nb::cast(v);
        }
      },
      a.scalar);
}

std::int64_t int64_of(nb::handle v, const std::string& what) {
  std::int64_t out = 0;
  if (!nb::isinstance<nb::bool_>(v) && nb::try_cast(v, out, false)) return out;
  const std::string shown = nb::cast<std::string>(nb::repr(v));
  if (!nb::isinstance<nb::int_>(v) || nb::isinstance<nb::bool_>(v)) {
    throw Error(ErrorCode::kInvalidArgument, what + " is " + shown + ": give an int");
  }
  throw Error(ErrorCode::kInvalidArgument,
              what + " is " + shown + ", outside the 64-bit range Kiln keeps (" +
                  std::to_string(std::numeric_limits<std::int64_t>::min()) + " to " +
                  std::to_string(std::numeric_limits<std::int64_t>::max()) +
                  "): give a smaller int");
}

}  // namespace kiln::py
