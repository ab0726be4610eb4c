// Described arguments -> device buffers with deterministic data.
#include "kiln/kernel_call.hpp"

#include <cstring>
#include <nlohmann/json.hpp>
#include <set>

#include "kiln/compare.hpp"
#include "kiln/error.hpp"
#include "kiln/hash.hpp"

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

Arg scalar_arg(const ArgSpec& spec, const ShapeDims& dims) {
  const ScalarSpec& s = spec.scalar();
  std::int64_t n = 0;
  double f = s.literal;
  if (!s.is_literal) {
    try {
      n = s.value.eval(dims);
    } catch (const Error& err) {
      throw Error(ErrorCode::kInvalidArgument, "argument '" + spec.name + "': " + err.what());
    }
    f = static_cast<double>(n);
  } else {
    n = static_cast<std::int64_t>(f);
  }
  switch (s.type) {
    case ArgType::kBool:
      return Arg::of_scalar(spec.name, n != 0, s.in_key);
    case ArgType::kI32:
      return Arg::of_scalar(spec.name, static_cast<std::int32_t>(n), s.in_key);
    case ArgType::kU32:
      return Arg::of_scalar(spec.name, static_cast<std::uint32_t>(n), s.in_key);
    case ArgType::kI64:
      return Arg::of_scalar(spec.name, n, s.in_key);
    case ArgType::kU64:
      return Arg::of_scalar(spec.name, static_cast<std::uint64_t>(n), s.in_key);
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

}  // namespace

Result<KernelCall> make_call(Device& device, const std::vector<ArgSpec>& specs,
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
    const auto count = static_cast<std::size_t>(desc.numel());
    const std::size_t bytes = count * dtype_size(t.dtype);
    // At least one byte: an empty tensor still gets a distinct address.
    auto buffer = device.allocate(bytes == 0 ? 1 : bytes);
    if (!buffer.ok()) return buffer.error();
    if (bytes > 0) {
      std::vector<std::uint8_t> host(bytes);
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
