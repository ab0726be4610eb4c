// The one signature parser (kernel_description.hpp): a kiln.Kernel's
// "name: type" entries, and the types of a JSON spec's "args" (a tensor's
// dtype as "T*", a scalar's type), so all read the same types alike.
#include <string>
#include <vector>

#include "kiln/core/error.hpp"
#include "kiln/kernels/kernel_description.hpp"

namespace kiln {

namespace {

constexpr ArgType kScalars[] = {ArgType::kF32, ArgType::kF64, ArgType::kI32, ArgType::kI64,
                                ArgType::kU32, ArgType::kU64, ArgType::kBool};
constexpr const char* kKnownTypes =
    "f32, f64, i32, i64, u32, u64, bool; a tensor as T* with T one of f16, bf16, f32, f64, i8, "
    "u8, i16, i32, i64, bool; a raw pointer as void*";

std::string trim(std::string s) {
  const auto b = s.find_first_not_of(" \t");
  const auto e = s.find_last_not_of(" \t");
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

[[noreturn]] void invalid(const std::string& what) {
  throw Error(ErrorCode::kInvalidArgument, what);
}

}  // namespace

KernelParam parse_param(std::string name, std::string type) {
  KernelParam p;
  p.name = std::move(name);
  type = trim(std::move(type));
  if (type.rfind("const ", 0) == 0) {
    type = trim(type.substr(6));
    p.read_only = true;
  }
  p.type_text = type;
  if (type == "void*" || type == "ptr") {
    p.kind = KernelParam::Kind::kPointer;
  } else if (!type.empty() && type.back() == '*') {
    p.kind = KernelParam::Kind::kTensor;
    const std::string elem = trim(type.substr(0, type.size() - 1));
    try {
      p.dtype = parse_dtype(elem);
    } catch (const Error&) {
      invalid("unknown element type '" + elem + "' (known: " + kKnownTypes + ")");
    }
  } else {
    bool found = false;
    for (ArgType s : kScalars) {
      if (type == arg_type_name(s)) {
        p.scalar = s;
        found = true;
      }
    }
    if (!found) invalid("unknown type '" + type + "' (known: " + kKnownTypes + ")");
  }
  return p;
}

std::vector<KernelParam> parse_signature(const std::vector<std::string>& entries) {
  std::vector<KernelParam> out;
  for (const auto& entry : entries) {
    const auto colon = entry.find(':');
    if (colon == std::string::npos)
      invalid("signature entry '" + entry + "' has no type: write \"name: type\" (" + kKnownTypes +
              ")");
    const std::string name = trim(entry.substr(0, colon));
    if (name.empty()) invalid("signature entry '" + entry + "' has no name");
    for (const auto& q : out) {
      if (q.name == name)
        invalid("signature names '" + name + "' twice: give each parameter its own name");
    }
    try {
      out.push_back(parse_param(name, entry.substr(colon + 1)));
    } catch (const Error& e) {
      invalid("signature entry '" + entry + "': " + e.what());
    }
  }
  return out;
}

}  // namespace kiln
