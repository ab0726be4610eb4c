// Described arguments -> device buffers with deterministic data.
#include "kiln/kernels/kernel_call.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "kiln/core/checked_math.hpp"
#include "kiln/core/error.hpp"
#include "kiln/core/hash.hpp"
#include "kiln/tuner/compare.hpp"

namespace kiln {

const char* arg_role_name(ArgRole role) {
  switch (role) {
    case ArgRole::kInput:
      return "input";
    case ArgRole::kOutput:
      return "output";
    case ArgRole::kInOut:
      return "inout";
  }
  return "?";
}

const char* arg_init_name(ArgInit init) {
  switch (init) {
    case ArgInit::kRandom:
      return "random";
    case ArgInit::kZeros:
      return "zeros";
    case ArgInit::kOnes:
      return "ones";
  }
  return "?";
}

ArgSpec ArgSpec::tensor(std::string name, DType dtype, std::vector<std::string> shape, ArgRole role,
                        ArgInit init) {
  TensorSpec t;
  t.dtype = dtype;
  for (const auto& s : shape) t.shape.push_back(IntExpr::parse(s));
  t.role = role;
  t.init = init;
  return ArgSpec{std::move(name), std::move(t)};
}

ArgSpec ArgSpec::scalar(std::string name, ArgType type, std::string value_expr, bool in_key) {
  ScalarSpec s;
  s.type = type;
  s.value = IntExpr::parse(value_expr);
  s.in_key = in_key;
  return ArgSpec{std::move(name), std::move(s)};
}

ArgSpec ArgSpec::literal(std::string name, ArgType type, double value, bool in_key) {
  ScalarSpec s;
  s.type = type;
  s.is_literal = true;
  s.literal = value;
  s.in_key = in_key;
  return ArgSpec{std::move(name), std::move(s)};
}

std::vector<std::string> dims_used(const std::vector<ArgSpec>& specs) {
  std::set<std::string> names;
  for (const auto& spec : specs) {
    if (spec.is_tensor()) {
      for (const auto& e : spec.tensor().shape)
        for (auto& v : e.variables()) names.insert(v);
    } else if (!spec.scalar().is_literal) {
      for (auto& v : spec.scalar().value.variables()) names.insert(v);
    }
  }
  return {names.begin(), names.end()};
}

std::vector<std::int64_t> eval_shape(const ArgSpec& spec, const ShapeDims& dims) {
  std::vector<std::int64_t> shape;
  for (const auto& e : spec.tensor().shape) {
    std::int64_t extent = 0;
    try {
      extent = e.eval(dims);
    } catch (const Error& err) {
      throw Error(ErrorCode::kInvalidArgument,
                  "the shape of argument '" + spec.name + "': " + err.what());
    }
    if (extent < 0) {
      throw Error(ErrorCode::kInvalidArgument, "the shape of argument '" + spec.name + "': '" +
                                                   e.text() + "' is " + std::to_string(extent) +
                                                   ", a dimension cannot be negative");
    }
    shape.push_back(extent);
  }
  return shape;
}

namespace {

// splitmix64: a fixed, portable sequence (std:: distributions differ
// between standard libraries, and a tuning problem must be the same data
// everywhere).
struct Rng {
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform in [-1, 1) on a grid of 2^-10, exact in every floating type
  // (fp16 included), so host and device see the same values.
  double unit() {
    return static_cast<double>(static_cast<std::int64_t>(next() >> 53) - 1024) / 1024.0;
  }
};

template <class T>
void put(std::vector<std::uint8_t>& bytes, std::size_t i, T value) {
  std::memcpy(bytes.data() + i * sizeof(T), &value, sizeof(T));
}

void fill_host(std::vector<std::uint8_t>& bytes, DType dtype, std::size_t count, ArgInit init,
               Rng& rng) {
  for (std::size_t i = 0; i < count; ++i) {
    const bool random = init == ArgInit::kRandom;
    const double f = random ? rng.unit() : (init == ArgInit::kOnes ? 1.0 : 0.0);
    // Integers: small values (-8..7, or 0..15 unsigned) that stay legal as
    // indices into small tables and never overflow a short sum.
    const std::int64_t n =
        random ? static_cast<std::int64_t>(rng.next() % 16) - 8 : (init == ArgInit::kOnes ? 1 : 0);
    switch (dtype) {
      case DType::kF16:
        put(bytes, i, float_to_half(static_cast<float>(f)));
        break;
      case DType::kBF16:
        put(bytes, i, float_to_bf16(static_cast<float>(f)));
        break;
      case DType::kF32:
        put(bytes, i, static_cast<float>(f));
        break;
      case DType::kF64:
        put(bytes, i, f);
        break;
      case DType::kI8:
        put(bytes, i, static_cast<std::int8_t>(n));
        break;
      case DType::kU8:
        put(bytes, i, static_cast<std::uint8_t>(random ? n + 8 : n));
        break;
      case DType::kI16:
        put(bytes, i, static_cast<std::int16_t>(n));
        break;
      case DType::kI32:
        put(bytes, i, static_cast<std::int32_t>(n));
        break;
      case DType::kI64:
        put(bytes, i, n);
        break;
      case DType::kBool:
        put(bytes, i, static_cast<std::uint8_t>(random ? (n & 1) : n));
        break;
    }
  }
}

// "M=2147483648, K=8": the dims `exprs` read, in the order they appear.
std::string dims_text(const std::vector<const IntExpr*>& exprs, const ShapeDims& dims) {
  std::vector<std::string> names;
  for (const IntExpr* e : exprs)
    for (auto& v : e->variables())
      if (std::find(names.begin(), names.end(), v) == names.end()) names.push_back(v);
  std::string out;
  for (const auto& n : names) {
    auto it = dims.find(n);
    if (it != dims.end()) out += (out.empty() ? "" : ", ") + n + "=" + std::to_string(it->second);
  }
  return out.empty() ? "this shape" : out;
}

std::string human_bytes(double bytes) {
  const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  int u = 0;
  while (bytes >= 1024 && u < 6) bytes /= 1024, ++u;
  char buf[48];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", bytes, units[u]);
  return buf;
}

// "M*K*4": a tensor's byte size as the product of its shape expressions.
std::string bytes_formula(const TensorSpec& t) {
  std::string out;
  for (const auto& e : t.shape) {
    const std::string& text = e.text();
    const bool name = std::all_of(text.begin(), text.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
    });
    out += (name ? text : "(" + text + ")") + "*";
  }
  return out + std::to_string(dtype_size(t.dtype));
}

// The tensor's bytes for `dims`, checked: never a wrapped product.
std::int64_t tensor_bytes(const ArgSpec& spec, const ShapeDims& dims) {
  const TensorSpec& t = spec.tensor();
  std::optional<std::int64_t> bytes = static_cast<std::int64_t>(dtype_size(t.dtype));
  for (std::int64_t extent : eval_shape(spec, dims))
    if (bytes) bytes = checked_mul(*bytes, extent);
  if (bytes) return *bytes;
  std::vector<const IntExpr*> exprs;
  for (const auto& e : t.shape) exprs.push_back(&e);
  throw Error(ErrorCode::kInvalidArgument,
              dims_text(exprs, dims) + ": " + bytes_formula(t) + " bytes for tensor '" + spec.name +
                  "' (" + dtype_name(t.dtype) +
                  ") overflows 64-bit sizes (at most 2^63-1 bytes): use a smaller shape");
}

// An integer scalar's value, checked against its type's range (a kernel
// taking `int n` must never see 2^31 wrapped to -2^31).
template <class T>
T narrow_scalar(const ArgSpec& spec, const ShapeDims& dims, std::int64_t value) {
  if (auto v = checked_narrow<T>(value)) return *v;
  const ScalarSpec& s = spec.scalar();
  const std::string type = arg_type_name(s.type);
  const std::string range = type + "'s range " + std::to_string(std::numeric_limits<T>::min()) +
                            ".." + std::to_string(std::numeric_limits<T>::max());
  if (s.is_literal) {
    throw Error(ErrorCode::kInvalidArgument, "argument '" + spec.name + "' (" + type +
                                                 "): the literal " + std::to_string(value) +
                                                 " is outside " + range);
  }
  // "'N*N' = " only when the value is more than one dim.
  const std::string expr = s.value.variables() == std::vector<std::string>{s.value.text()}
                               ? ""
                               : " = '" + s.value.text() + "'";
  throw Error(ErrorCode::kInvalidArgument,
              dims_text({&s.value}, dims) + ": argument '" + spec.name + "' (" + type + ")" + expr +
                  " would be " + std::to_string(value) + ", outside " + range +
                  " (the kernel takes it as " + type + "): use a smaller shape");
}

// A literal for an integer type: a whole number within 64 bits (casting
// 2.5, 1e300 or NaN would truncate or be undefined).
std::int64_t integer_literal(const ArgSpec& spec) {
  const double f = spec.scalar().literal;
  if (!std::isfinite(f) || f != std::trunc(f) || f < -0x1p63 || f >= 0x1p63) {
    throw Error(ErrorCode::kInvalidArgument, "argument '" + spec.name + "' (" +
                                                 arg_type_name(spec.scalar().type) +
                                                 "): the literal " + std::to_string(f) +
                                                 " is not a whole number within 64 bits");
  }
  return static_cast<std::int64_t>(f);
}

Arg scalar_arg(const ArgSpec& spec, const ShapeDims& dims) {
  const ScalarSpec& s = spec.scalar();
  const bool floating = s.type == ArgType::kF32 || s.type == ArgType::kF64;
  std::int64_t n = 0;
  double f = s.literal;
  if (!s.is_literal) {
    try {
      n = s.value.eval(dims);
    } catch (const Error& err) {
      throw Error(ErrorCode::kInvalidArgument, "argument '" + spec.name + "': " + err.what());
    }
    f = static_cast<double>(n);
  } else if (!floating) {
    n = integer_literal(spec);
  }
  if (s.type == ArgType::kF32 && std::isfinite(f) &&
      std::abs(f) > std::numeric_limits<float>::max()) {
    throw Error(ErrorCode::kInvalidArgument, "argument '" + spec.name +
                                                 "' (f32): " + std::to_string(f) +
                                                 " is outside f32's range (about 3.4e38)");
  }
  switch (s.type) {
    case ArgType::kBool:
      return Arg::of_scalar(spec.name, n != 0, s.in_key);
    case ArgType::kI32:
      return Arg::of_scalar(spec.name, narrow_scalar<std::int32_t>(spec, dims, n), s.in_key);
    case ArgType::kU32:
      return Arg::of_scalar(spec.name, narrow_scalar<std::uint32_t>(spec, dims, n), s.in_key);
    case ArgType::kI64:
      return Arg::of_scalar(spec.name, n, s.in_key);
    case ArgType::kU64:
      return Arg::of_scalar(spec.name, narrow_scalar<std::uint64_t>(spec, dims, n), s.in_key);
    case ArgType::kF32:
      return Arg::of_scalar(spec.name, static_cast<float>(f), s.in_key);
    case ArgType::kF64:
      return Arg::of_scalar(spec.name, f, s.in_key);
    case ArgType::kPointer:
      break;
  }
  throw Error(ErrorCode::kInvalidArgument,
              "argument '" + spec.name + "': scalars are bool, i32, u32, i64, u64, f32 or f64");
}

// Refuses a call whose tensors need more than the device holds: the
// allocation would fail, or (host memory overcommitted) succeed and get the
// process killed when the data is written.
Status check_fits(const Device& device, const std::vector<ArgSpec>& specs, const ShapeDims& dims,
                  std::int64_t total) {
  const DeviceProperties& props = device.properties();
  if (props.total_memory == 0 || static_cast<std::uint64_t>(total) <= props.total_memory)
    return ok_status();
  const ArgSpec* largest = nullptr;
  std::int64_t largest_bytes = -1;
  std::vector<const IntExpr*> exprs;
  for (const auto& spec : specs) {
    if (!spec.is_tensor()) continue;
    for (const auto& e : spec.tensor().shape) exprs.push_back(&e);
    const std::int64_t b = tensor_bytes(spec, dims);
    if (b > largest_bytes) largest = &spec, largest_bytes = b;
  }
  return make_error(ErrorCode::kInvalidArgument,
                    dims_text(exprs, dims) + ": the call's tensors need " +
                        human_bytes(static_cast<double>(total)) + " (the largest, '" +
                        largest->name + "', " + bytes_formula(largest->tensor()) + " = " +
                        human_bytes(static_cast<double>(largest_bytes)) + "), more than the " +
                        props.ref.to_string() + " device's " +
                        human_bytes(static_cast<double>(props.total_memory)) +
                        " of memory: use a smaller shape",
                    {{"bytes_needed", std::to_string(total)},
                     {"device_memory", std::to_string(props.total_memory)}});
}

Result<KernelCall> fill_call(Device& device, const std::vector<ArgSpec>& specs,
                             const ShapeDims& dims, std::uint64_t seed) {
  KernelCall call;
  call.args.reserve(specs.size());
  for (const auto& spec : specs) {
    if (!spec.is_tensor()) {
      call.args.push_back(scalar_arg(spec, dims));
      continue;
    }
    const TensorSpec& t = spec.tensor();
    TensorArg desc =
        TensorArg::contiguous(t.dtype, eval_shape(spec, dims), device.properties().ref);
    const auto count = static_cast<std::size_t>(desc.numel(spec.name));
    const auto bytes = static_cast<std::size_t>(tensor_bytes(spec, dims));
    // At least one byte: an empty tensor still gets a distinct address.
    auto buffer = device.allocate(bytes == 0 ? 1 : bytes);
    if (!buffer.ok()) return buffer.error();
    if (bytes > 0) {
      std::vector<std::uint8_t> host;
      try {
        host.resize(bytes);
      } catch (const std::bad_alloc&) {
        return make_error(ErrorCode::kUnavailable,
                          "cannot allocate " + human_bytes(static_cast<double>(bytes)) +
                              " of host memory to fill tensor '" + spec.name +
                              "': use a smaller shape or free some memory");
      }
      Rng rng{seed ^ hash128(spec.name).low};
      fill_host(host, t.dtype, count, t.init, rng);
      Status copied = device.copy_to_device(buffer->data(), host.data(), bytes);
      if (!copied.ok()) return copied.error();
    }
    call.args.push_back(Arg::of_tensor(spec.name, buffer->data(), std::move(desc)));
    call.buffers.push_back(std::move(*buffer));
  }
  Status done = device.synchronize();
  if (!done.ok()) return done.error();
  return call;
}

}  // namespace

std::int64_t call_bytes(const std::vector<ArgSpec>& specs, const ShapeDims& dims) {
  std::int64_t total = 0;
  std::vector<const IntExpr*> exprs;  // the shapes summed so far, for the message
  for (const auto& spec : specs) {
    if (!spec.is_tensor()) {
      (void)scalar_arg(spec, dims);  // throws when the value does not fit its type
      continue;
    }
    for (const auto& e : spec.tensor().shape) exprs.push_back(&e);
    const auto sum = checked_add(total, tensor_bytes(spec, dims));
    if (!sum) {
      throw Error(ErrorCode::kInvalidArgument,
                  dims_text(exprs, dims) +
                      ": the call's tensors together overflow 64-bit sizes (at most 2^63-1 "
                      "bytes) at tensor '" +
                      spec.name + "': use a smaller shape");
    }
    total = *sum;
  }
  return total;
}

Result<KernelCall> make_call(Device& device, const std::vector<ArgSpec>& specs,
                             const ShapeDims& dims, std::uint64_t seed) {
  try {
    // Every size and scalar is checked, and the total against the device,
    // before the first byte is allocated.
    Status fits = check_fits(device, specs, dims, call_bytes(specs, dims));
    if (!fits.ok()) return fits.error();
    return fill_call(device, specs, dims, seed);
  } catch (const Error& e) {
    return e.info();
  }
}

nlohmann::json arg_specs_to_json(const std::vector<ArgSpec>& specs) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& spec : specs) {
    if (spec.is_tensor()) {
      const TensorSpec& t = spec.tensor();
      nlohmann::json shape = nlohmann::json::array();
      for (const auto& e : t.shape) shape.push_back(e.text());
      out.push_back({{"name", spec.name},
                     {"dtype", dtype_name(t.dtype)},
                     {"shape", shape},
                     {"role", arg_role_name(t.role)},
                     {"init", arg_init_name(t.init)}});
    } else {
      const ScalarSpec& s = spec.scalar();
      nlohmann::json j = {
          {"name", spec.name}, {"type", arg_type_name(s.type)}, {"in_key", s.in_key}};
      if (s.is_literal)
        j["value"] = s.literal;
      else
        j["value"] = s.value.text();
      out.push_back(std::move(j));
    }
  }
  return out;
}

}  // namespace kiln
