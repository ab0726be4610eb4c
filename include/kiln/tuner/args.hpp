// The arguments of one kernel call as the tuner sees them: named tensors
// (a device address plus a descriptor) and named scalars, in the kernel's
// parameter order. From them come the launch's KernelArgs and the call's
// ProblemKey.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "kiln/core/problem.hpp"
#include "kiln/core/tensor.hpp"
#include "kiln/device/device.hpp"
#include "kiln/tuner/buckets.hpp"

namespace kiln {

// A raw pointer (a flag, a workspace the caller owns) is passed as is and
// never enters the problem key; with its extent (Arg::of_pointer) it can be
// copied to a benchmark worker process like a tensor.
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
  // Raw pointers: the bytes the kernel may touch from the address, when the
  // caller knows them (of_pointer). Known, the pointer's memory is handled
  // like a tensor's storage: copied to each benchmark worker process (so a
  // config that crashes or scribbles never touches the caller's memory),
  // snapshotted for restore_value and zeroed for reset_to_zero. Unknown, the
  // call can be benchmarked only in threads of this process
  // (Isolation::kThread): tuning refuses it otherwise, naming the argument.
  std::optional<std::size_t> extent;

  static Arg of_tensor(std::string name, void* data, TensorArg tensor);
  // A raw pointer spanning `bytes` from `address` (a workspace, a buffer
  // whose layout the kernel alone knows), in the memory of the call's
  // device. Never in the problem key.
  static Arg of_pointer(std::string name, const void* address, std::size_t bytes);
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

  // Bytes from the tensor's first element to one past its last, or a raw
  // pointer's extent (the span a snapshot must copy); 0 for other scalars,
  // pointers of unknown extent and empty tensors.
  std::size_t storage_bytes() const;
  // A raw pointer scalar (void*), whether its extent is known or not.
  bool is_pointer() const { return !is_tensor && std::holds_alternative<void*>(scalar); }
  // Whether its memory can be copied: a tensor, or a pointer with its extent.
  bool has_storage() const { return is_tensor || (is_pointer() && extent.has_value()); }
  // The memory it spans: a tensor's data, a raw pointer's address; null for
  // other scalars. set_address moves it (onto a replica's buffer).
  void* address() const;
  void set_address(void* p);
};

using ArgList = std::vector<Arg>;

// The launch arguments, in order. Throws kiln::Error when two arguments
// share a name.
KernelArgs pack(const ArgList& args);
// Kernel name + tensors (dtype, shape, stride pattern) + scalars with in_key,
// each size a rule of `buckets` names replaced by its representative.
// Throws kiln::Error naming the rule when its argument is missing, is not an
// integer scalar in the key (dim unset) or a tensor with that dim.
ProblemKey problem_key(const std::string& kernel, const ArgList& args,
                       const std::vector<KeyBucket>& buckets = {});
// The device bytes the call's tensors and sized raw pointers span
// (Arg::storage_bytes from Arg::address): what a cold-cache flush evicts
// (Device::flush_caches). Scalars, raw pointers of unknown extent and empty
// tensors add none.
std::vector<DeviceSpan> touched_spans(const ArgList& args);
// The argument named `name`; throws kiln::Error naming it and the known ones.
const Arg& find_arg(const ArgList& args, const std::string& name);

}  // namespace kiln
