// The arguments of one kernel call as the tuner sees them: named tensors
// (a device address plus a descriptor) and named scalars, in the kernel's
// parameter order. From them come the launch's KernelArgs and the call's
// ProblemKey.
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "kiln/core/problem.hpp"
#include "kiln/core/tensor.hpp"
#include "kiln/runtime/device.hpp"

namespace kiln {

// A raw pointer (a flag, a workspace the caller owns) is passed as is and
// never enters the problem key.
using ScalarValue = std::variant<bool, std::int32_t, std::uint32_t, std::int64_t, std::uint64_t,
                                 float, double, void*>;

struct Arg {
  std::string name;
  bool is_tensor = false;
  void* data = nullptr;  // tensors: the device address
  TensorArg tensor;      // tensors: dtype, shape, strides, device
  ScalarValue scalar;    // scalars: the value passed to the kernel
  // Scalars: whether the value enters the problem key (sizes do; a
  // learning rate that does not change the best config does not).
  bool in_key = true;

  static Arg of_tensor(std::string name, void* data, TensorArg tensor);
  template <class T>
  static Arg of_scalar(std::string name, T value, bool in_key = true) {
    Arg a;
    a.name = std::move(name);
    if constexpr (std::is_pointer_v<T>) {
      a.scalar = const_cast<void*>(static_cast<const void*>(value));
      a.in_key = false;
    } else {
      a.scalar = value;
      a.in_key = in_key;
    }
    return a;
  }

  // Bytes from the tensor's first element to one past its last (the span a
  // snapshot must copy); 0 for scalars and empty tensors.
  std::size_t storage_bytes() const;
};

using ArgList = std::vector<Arg>;

// The launch arguments, in order. Throws kiln::Error when two arguments
// share a name.
KernelArgs pack(const ArgList& args);
// Kernel name + tensors (dtype, shape, stride pattern) + scalars with in_key.
ProblemKey problem_key(const std::string& kernel, const ArgList& args);
// The device bytes the call's tensors span (Arg::storage_bytes from
// Arg::data): what a cold-cache flush evicts (Device::flush_caches).
// Scalars, raw pointers (their size is unknown) and empty tensors add none.
std::vector<DeviceSpan> touched_spans(const ArgList& args);
// The argument named `name`; throws kiln::Error naming it and the known ones.
const Arg& find_arg(const ArgList& args, const std::string& name);

}  // namespace kiln
