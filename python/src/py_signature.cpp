// parse_signature: see py_args.hpp.
#include <string>
#include <vector>

#include "kiln/core/error.hpp"
#include "kiln/device/device.hpp"
#include "py_args.hpp"

namespace kiln::py {

namespace {

// The scalar types a signature names, by arg_type_name (the names a JSON
// kernel spec's "type" reads too).
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

}  // namespace

std::vector<Param> parse_signature(const std::vector<std::string>& entries) {
  std::vector<Param> out;
  for (const auto& entry : entries) {
    const auto colon = entry.find(':');
    if (colon == std::string::npos) {
      throw Error(ErrorCode::kInvalidArgument, "signature entry '" + entry +
                                                   "' has no type: write \"name: type\" (" +
                                                   kKnownTypes + ")");
    }
    Param p;
    p.name = trim(entry.substr(0, colon));
    std::string type = trim(entry.substr(colon + 1));
    if (type.rfind("const ", 0) == 0) {
      type = trim(type.substr(6));
      p.read_only = true;
    }
    p.type_text = type;
    if (p.name.empty()) {
      throw Error(ErrorCode::kInvalidArgument, "signature entry '" + entry + "' has no name");
    }
    for (const auto& q : out) {
      if (q.name == p.name) {
        throw Error(ErrorCode::kInvalidArgument,
                    "signature names '" + p.name + "' twice: give each parameter its own name");
      }
    }
    if (type == "void*" || type == "ptr") {
      p.kind = Param::Kind::kPointer;
    } else if (!type.empty() && type.back() == '*') {
      p.kind = Param::Kind::kTensor;
      const std::string elem = trim(type.substr(0, type.size() - 1));
      try {
        p.dtype = parse_dtype(elem);
      } catch (const Error&) {
        throw Error(ErrorCode::kInvalidArgument, "signature entry '" + entry +
                                                     "': unknown element type '" + elem +
                                                     "' (known: " + kKnownTypes + ")");
      }
    } else {
      bool found = false;
      for (ArgType s : kScalars) {
        if (type == arg_type_name(s)) {
          p.scalar = s;
          found = true;
        }
      }
      if (!found) {
        throw Error(ErrorCode::kInvalidArgument, "signature entry '" + entry + "': unknown type '" +
                                                     type + "' (known: " + kKnownTypes + ")");
      }
    }
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace kiln::py
