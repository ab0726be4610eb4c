#include "kiln/tuner/args.hpp"

#include <set>

#include "kiln/core/error.hpp"

namespace kiln {

Arg Arg::of_tensor(std::string name, void* data, TensorArg tensor) {
  tensor.validate(name);
  Arg a;
  a.name = std::move(name);
  a.is_tensor = true;
  a.data = data;
  a.tensor = std::move(tensor);
  return a;
}

Arg Arg::of_pointer(std::string name, const void* address, std::size_t bytes) {
  Arg a = of_scalar(std::move(name), address);
  a.extent = bytes;
  return a;
}

std::size_t Arg::storage_bytes() const {
  if (!is_tensor) return is_pointer() ? extent.value_or(0) : 0;
  return static_cast<std::size_t>(tensor.storage_bytes(name));
}

void* Arg::address() const {
  if (is_tensor) return data;
  void* const* p = std::get_if<void*>(&scalar);
  return p ? *p : nullptr;
}

void Arg::set_address(void* p) {
  if (is_tensor) {
    data = p;
  } else if (is_pointer()) {
    scalar = p;
  }
}

std::vector<DeviceSpan> touched_spans(const ArgList& args) {
  std::vector<DeviceSpan> spans;
  for (const auto& a : args) {
    if (const std::size_t bytes = a.storage_bytes(); bytes > 0 && a.address()) {
      spans.push_back({a.address(), bytes});
    }
  }
  return spans;
}

namespace {
void check_unique(const ArgList& args) {
  std::set<std::string> seen;
  for (const auto& a : args) {
    if (!seen.insert(a.name).second) {
      throw Error(ErrorCode::kInvalidArgument,
                  "argument '" + a.name + "' is given twice: every argument needs its own name");
    }
  }
}
}  // namespace

KernelArgs pack(const ArgList& args) {
  check_unique(args);
  KernelArgs out;
  for (const auto& a : args) {
    if (a.is_tensor)
      out.add(a.data);
    else
      std::visit([&](auto v) { out.add(v); }, a.scalar);
  }
  return out;
}

namespace {

Value key_value(const ScalarValue& scalar) {
  return std::visit(
      [](auto x) -> Value {
        using T = decltype(x);
        if constexpr (std::is_same_v<T, void*>) {
          return std::string("ptr");  // never in_key (of_scalar), kept for safety
        } else if constexpr (std::is_same_v<T, bool>) {
          return x;
        } else if constexpr (std::is_floating_point_v<T>) {
          return std::to_string(x);
        } else {
          return static_cast<std::int64_t>(x);
        }
      },
      scalar);
}

[[noreturn]] void bad_bucket(const KeyBucket& b, const std::string& why) {
  throw Error(ErrorCode::kInvalidArgument, "the bucket rule on '" + b.name() + "': " + why);
}

// The call's size under `b`: a tensor's extent, or an integer scalar's value.
std::int64_t bucketed_size(const KeyBucket& b, const Arg& a) {
  if (b.dim) {
    if (!a.is_tensor) bad_bucket(b, "'" + a.name + "' is a scalar: name it without a dim");
    if (*b.dim >= a.tensor.shape.size())
      bad_bucket(b, "'" + a.name + "' has " + std::to_string(a.tensor.shape.size()) +
                        " dims: name one of them, counting from 0");
    return a.tensor.shape[*b.dim];
  }
  if (a.is_tensor) bad_bucket(b, "'" + a.name + "' is a tensor: name the dim to bucket");
  const Value v = key_value(a.scalar);
  if (!a.in_key || !std::holds_alternative<std::int64_t>(v))
    bad_bucket(b, "'" + a.name + "' is not an integer scalar of the key: bucket a size");
  return std::get<std::int64_t>(v);
}

}  // namespace

ProblemKey problem_key(const std::string& kernel, const ArgList& args,
                       const std::vector<KeyBucket>& buckets) {
  check_unique(args);
  std::vector<std::pair<const KeyBucket*, std::int64_t>> rep;
  for (const KeyBucket& b : buckets) {
    const Arg* a = nullptr;
    try {
      a = &find_arg(args, b.arg);
    } catch (const Error& e) {
      bad_bucket(b, e.what());
    }
    rep.emplace_back(
        &b, b.rule.representative(bucketed_size(b, *a), "the bucket rule on '" + b.name() + "'"));
  }
  ProblemKey key(kernel);
  for (const auto& a : args) {
    if (a.is_tensor) {
      key.tensor(a.name, a.tensor);
    } else if (a.in_key) {
      Value v = key_value(a.scalar);
      for (const auto& [b, r] : rep)
        if (b->arg == a.name && !b->dim) v = r;
      key.scalar(a.name, v);
    }
  }
  for (const auto& [b, r] : rep)
    if (b->dim) key.bucket(b->arg, *b->dim, r);
  return key;
}

const Arg& find_arg(const ArgList& args, const std::string& name) {
  std::string known;
  for (const auto& a : args) {
    if (a.name == name) return a;
    known += (known.empty() ? "" : ", ") + a.name;
  }
  throw Error(ErrorCode::kInvalidArgument,
              "no argument named '" + name + "' (the call has: " + known + ")");
}

}  // namespace kiln
