#include "kiln/core/tensor.hpp"

#include <array>
#include <nlohmann/json.hpp>

#include "kiln/core/checked_math.hpp"
#include "kiln/core/error.hpp"

namespace kiln {

namespace {
struct DTypeInfo {
  DType dtype;
  const char* name;
  std::size_t size;
};
constexpr std::array<DTypeInfo, 10> kDTypes = {{
    {DType::kF16, "f16", 2},
    {DType::kBF16, "bf16", 2},
    {DType::kF32, "f32", 4},
    {DType::kF64, "f64", 8},
    {DType::kI8, "i8", 1},
    {DType::kU8, "u8", 1},
    {DType::kI16, "i16", 2},
    {DType::kI32, "i32", 4},
    {DType::kI64, "i64", 8},
    {DType::kBool, "bool", 1},
}};
}  // namespace

const char* dtype_name(DType dtype) {
  return kDTypes[static_cast<std::size_t>(dtype)].name;
}
std::size_t dtype_size(DType dtype) {
  return kDTypes[static_cast<std::size_t>(dtype)].size;
}

DType parse_dtype(std::string_view name) {
  for (const auto& info : kDTypes) {
    if (name == info.name) return info.dtype;
  }
  struct Alias {
    const char* alias;
    DType dtype;
  };
  static constexpr Alias kAliases[] = {
      {"float16", DType::kF16}, {"half", DType::kF16},  {"bfloat16", DType::kBF16},
      {"float32", DType::kF32}, {"float", DType::kF32}, {"float64", DType::kF64},
      {"double", DType::kF64},  {"int8", DType::kI8},   {"uint8", DType::kU8},
      {"int16", DType::kI16},   {"int32", DType::kI32}, {"int64", DType::kI64},
  };
  for (const auto& a : kAliases) {
    if (name == a.alias) return a.dtype;
  }
  throw Error(ErrorCode::kInvalidArgument,
              "unknown dtype '" + std::string(name) +
                  "': use one of f16, bf16, f32, f64, i8, u8, i16, i32, i64, bool");
}

std::string DeviceRef::to_string() const {
  return on_host() ? backend : backend + ":" + std::to_string(index);
}

namespace {

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string out = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + "]";
}

[[noreturn]] void too_large(std::string_view name, const std::vector<std::int64_t>& shape,
                            const std::string& what) {
  throw Error(ErrorCode::kInvalidArgument, "tensor argument '" + std::string(name) + "' of shape " +
                                               shape_text(shape) + ": " + what +
                                               " overflows 64-bit sizes (at most 2^63-1)");
}

}  // namespace

TensorArg TensorArg::contiguous(DType dtype, std::vector<std::int64_t> shape, DeviceRef device) {
  std::vector<std::int64_t> strides(shape.size(), 1);
  for (std::size_t i = shape.size(); i > 1; --i) {
    auto stride = checked_mul(strides[i - 1], shape[i - 1]);
    if (!stride) too_large("tensor", shape, "the stride of dim " + std::to_string(i - 2));
    strides[i - 2] = *stride;
  }
  return TensorArg{dtype, std::move(shape), std::move(strides), device};
}

void TensorArg::validate(std::string_view name) const {
  auto fail = [&](const std::string& what) {
    throw Error(ErrorCode::kInvalidArgument,
                "tensor argument '" + std::string(name) + "': " + what);
  };
  if (shape.size() != strides.size()) {
    fail("shape has " + std::to_string(shape.size()) + " dims but strides has " +
         std::to_string(strides.size()) + ": give one stride (in elements) per dim");
  }
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] < 0)
      fail("dim " + std::to_string(i) + " has negative extent " + std::to_string(shape[i]));
    if (strides[i] < 0)
      fail("dim " + std::to_string(i) + " has negative stride " + std::to_string(strides[i]));
  }
  // Both throw, naming the shape, when a size overflows.
  (void)numel(name);
  (void)storage_bytes(name);
}

std::int64_t TensorArg::numel(std::string_view name) const {
  std::int64_t n = 1;
  for (auto d : shape) {
    const auto next = checked_mul(n, d);
    if (!next) too_large(name, shape, "the element count");
    n = *next;
  }
  return n;
}

std::int64_t TensorArg::storage_bytes(std::string_view name) const {
  for (auto d : shape)
    if (d == 0) return 0;
  std::int64_t last = 0;  // offset of the last element, in elements
  for (std::size_t i = 0; i < shape.size(); ++i) {
    const std::int64_t stride = i < strides.size() ? strides[i] : 0;
    const auto step = checked_mul(shape[i] - 1, stride);
    const auto sum = step ? checked_add(last, *step) : std::nullopt;
    if (!sum) too_large(name, shape, "the storage span");
    last = *sum;
  }
  const auto count = checked_add<std::int64_t>(last, 1);
  const auto bytes =
      count ? checked_mul(*count, static_cast<std::int64_t>(dtype_size(dtype))) : std::nullopt;
  if (!bytes) too_large(name, shape, "the byte size");
  return *bytes;
}

std::vector<StrideClass> stride_pattern(const TensorArg& arg) {
  arg.validate();
  std::vector<StrideClass> out;
  out.reserve(arg.shape.size());
  for (std::size_t i = 0; i < arg.shape.size(); ++i) {
    if (arg.shape[i] == 1 || arg.strides[i] == 1)
      out.push_back(StrideClass::kContiguous);
    else if (arg.strides[i] == 0)
      out.push_back(StrideClass::kBroadcast);
    else
      out.push_back(StrideClass::kOther);
  }
  return out;
}

std::string stride_pattern_text(const std::vector<StrideClass>& pattern) {
  std::string out;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (i) out += ',';
    out += static_cast<char>('0' + static_cast<int>(pattern[i]));
  }
  return out;
}

nlohmann::json to_json(const TensorArg& arg) {
  return {{"dtype", dtype_name(arg.dtype)},
          {"shape", arg.shape},
          {"strides", arg.strides},
          {"device", arg.device.to_string()}};
}

}  // namespace kiln
