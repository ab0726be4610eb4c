#include "kiln/core/problem.hpp"

#include <nlohmann/json.hpp>

#include "kiln/core/error.hpp"

namespace kiln {

ProblemKey::ProblemKey(std::string kernel) : kernel_(std::move(kernel)) {
  if (kernel_.empty())
    throw Error(ErrorCode::kInvalidArgument, "a problem key needs a kernel name");
}

void ProblemKey::claim(const std::string& name) const {
  if (name.empty()) {
    throw Error(ErrorCode::kInvalidArgument,
                "problem key for '" + kernel_ + "': an argument needs a name (keys sort by it)");
  }
  if (tensors_.count(name) || scalars_.count(name)) {
    throw Error(ErrorCode::kInvalidArgument,
                "problem key for '" + kernel_ + "': argument '" + name + "' is given twice");
  }
}

ProblemKey& ProblemKey::tensor(std::string name, const TensorArg& arg) {
  claim(name);
  arg.validate(name);
  tensors_.emplace(std::move(name), ArgSignature{arg.dtype, arg.shape, stride_pattern(arg)});
  return *this;
}

ProblemKey& ProblemKey::scalar(std::string name, Value value) {
  claim(name);
  scalars_.emplace(std::move(name), std::move(value));
  return *this;
}

ProblemKey& ProblemKey::bucket(std::string_view name, std::size_t dim, std::int64_t bucket_value) {
  auto it = tensors_.find(name);
  if (it == tensors_.end()) {
    throw Error(ErrorCode::kInvalidArgument, "problem key for '" + kernel_ +
                                                 "': cannot bucket unknown tensor '" +
                                                 std::string(name) + "'");
  }
  if (dim >= it->second.shape.size()) {
    throw Error(ErrorCode::kInvalidArgument, "problem key for '" + kernel_ + "': tensor '" +
                                                 std::string(name) + "' has " +
                                                 std::to_string(it->second.shape.size()) +
                                                 " dims, no dim " + std::to_string(dim));
  }
  it->second.shape[dim] = bucket_value;
  return *this;
}

std::string ProblemKey::canonical() const {
  std::string out = kernel_;
  for (const auto& [name, sig] : tensors_) {
    out += '|';
    out += name;
    out += ':';
    out += dtype_name(sig.dtype);
    out += '[';
    for (std::size_t i = 0; i < sig.shape.size(); ++i) {
      if (i) out += ',';
      out += std::to_string(sig.shape[i]);
    }
    out += "]{" + stride_pattern_text(sig.pattern) + '}';
  }
  for (const auto& [name, value] : scalars_) {
    // The type is part of the key: 1 and true are different scalars.
    out += "|#" + name + '=' + value_type_name(value_type(value)) + ':' + value_text(value);
  }
  return out;
}

nlohmann::json ProblemKey::to_json() const {
  nlohmann::json tensors = nlohmann::json::object();
  for (const auto& [name, sig] : tensors_) {
    tensors[name] = {{"dtype", dtype_name(sig.dtype)},
                     {"shape", sig.shape},
                     {"strides", stride_pattern_text(sig.pattern)}};
  }
  nlohmann::json scalars = nlohmann::json::object();
  for (const auto& [name, value] : scalars_) scalars[name] = value_to_json(value);
  return {{"kernel", kernel_}, {"tensors", tensors}, {"scalars", scalars}};
}

ProblemKey ProblemKey::from_json(const nlohmann::json& json) {
  auto bad = [&](const std::string& what) -> void {
    throw Error(ErrorCode::kInvalidArgument, "problem-key JSON: " + what + " in " + json.dump());
  };
  if (!json.is_object() || !json.contains("kernel") || !json["kernel"].is_string()) {
    bad("expected an object with a string \"kernel\"");
  }
  ProblemKey key(json["kernel"].get<std::string>());
  // Held in locals: iterating items() of a temporary would dangle.
  const nlohmann::json tensors = json.value("tensors", nlohmann::json::object());
  const nlohmann::json scalars = json.value("scalars", nlohmann::json::object());
  if (!tensors.is_object() || !scalars.is_object())
    bad("\"tensors\" and \"scalars\" must be objects");
  for (const auto& [name, t] : tensors.items()) {
    if (!t.is_object() || !t.contains("dtype") || !t.contains("shape") || !t.contains("strides") ||
        !t["strides"].is_string() || !t["shape"].is_array()) {
      bad("tensor '" + name + "' needs dtype, shape and strides");
    }
    ArgSignature sig;
    sig.dtype = parse_dtype(t["dtype"].get<std::string>());
    for (const auto& d : t["shape"]) {
      if (!d.is_number_integer()) bad("tensor '" + name + "' has a non-integer extent");
      sig.shape.push_back(d.get<std::int64_t>());
    }
    for (char c : t["strides"].get<std::string>()) {
      if (c == ',') continue;
      if (c < '0' || c > '2')
        bad("tensor '" + name + "' has stride class '" + c + "' (use 0, 1, 2)");
      sig.pattern.push_back(static_cast<StrideClass>(c - '0'));
    }
    if (sig.pattern.size() != sig.shape.size()) bad("tensor '" + name + "' has rank mismatch");
    key.claim(name);
    key.tensors_.emplace(name, std::move(sig));
  }
  for (const auto& [name, v] : scalars.items()) {
    key.scalar(name, value_from_json(v, name));
  }
  return key;
}

}  // namespace kiln
