// Tensor argument descriptors: what a kernel argument looks like to the
// tuner (dtype, shape, strides in elements, device), not its data.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace kiln {

enum class DType : std::uint8_t { kF16, kBF16, kF32, kF64, kI8, kU8, kI16, kI32, kI64, kBool };

const char* dtype_name(DType dtype);       // "f16", "bf16", "f32", ...
std::size_t dtype_size(DType dtype);       // bytes per element
DType parse_dtype(std::string_view name);  // accepts the names above and "float16", "half", ...

// A device is named by its backend's registered name ("cpu", "cuda",
// "replay": kiln/device/backend.hpp, backends/backends.cpp) and an index.
// The set is open: a backend brings its own name, and nothing here lists
// them. The host's backend is the default, where a tensor lives unless said.
inline constexpr const char* kHostBackend = "cpu";

struct DeviceRef {
  std::string backend = kHostBackend;  // the registered name of its backend
  int index = 0;
  // "cpu" for the host (one device, whatever the index); "cuda:0" else.
  std::string to_string() const;
  bool on_host() const { return backend == kHostBackend; }
  bool operator==(const DeviceRef&) const = default;
};

// Per-dimension class of a stride, as a tuning key sees it: generated code
// differs between a broadcast dim, a unit-stride dim and anything else, but
// not between two "other" strides.
enum class StrideClass : std::uint8_t { kBroadcast = 0, kContiguous = 1, kOther = 2 };

struct TensorArg {
  DType dtype = DType::kF32;
  std::vector<std::int64_t> shape;
  std::vector<std::int64_t> strides;  // in elements, one per dimension
  DeviceRef device;

  // Row-major strides for `shape`.
  static TensorArg contiguous(DType dtype, std::vector<std::int64_t> shape, DeviceRef device = {});

  // Throws kiln::Error naming `name` when strides and shape differ in rank,
  // a dim is negative, a stride is negative, or the element count or the
  // bytes it spans overflow 64 bits.
  void validate(std::string_view name = "tensor") const;
  // The element count; throws kiln::Error naming `name` and the shape when
  // it overflows 64 bits (never wraps).
  std::int64_t numel(std::string_view name = "tensor") const;
  // Bytes from the first element to one past the last (0 when a dim is 0);
  // throws like numel().
  std::int64_t storage_bytes(std::string_view name = "tensor") const;
};

// One class per dimension: 0 for stride 0 (broadcast), 1 for stride 1
// (contiguous), 2 otherwise. A dimension of extent 1 is classed 1 whatever
// its stride: it is never stepped, and frameworks give such dims arbitrary
// strides, which must not split one problem into several keys.
std::vector<StrideClass> stride_pattern(const TensorArg& arg);
// "1,0,2" form of the above.
std::string stride_pattern_text(const std::vector<StrideClass>& pattern);

nlohmann::json to_json(const TensorArg& arg);

}  // namespace kiln
