// ProblemKey: what makes two calls of a kernel the same problem for tuning.
// Kernel name + per tensor argument (dtype, shape or its bucket, stride
// pattern) + the scalar arguments that matter. Arguments are kept sorted by
// name, so the order in which they are given never changes the key.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "kiln/core/config.hpp"
#include "kiln/core/hash.hpp"
#include "kiln/core/tensor.hpp"

namespace kiln {

struct ArgSignature {
  DType dtype = DType::kF32;
  std::vector<std::int64_t> shape;  // extents, or bucket ids after bucket()
  std::vector<StrideClass> pattern;
  bool operator==(const ArgSignature&) const = default;
};

class ProblemKey {
 public:
  explicit ProblemKey(std::string kernel);

  // Throws kiln::Error when `name` is already an argument (tensor or scalar)
  // or `arg` is malformed.
  ProblemKey& tensor(std::string name, const TensorArg& arg);
  ProblemKey& scalar(std::string name, Value value);
  // Replaces the extent of dimension `dim` of tensor `name` with its bucket,
  // so every size in that bucket shares one key.
  ProblemKey& bucket(std::string_view name, std::size_t dim, std::int64_t bucket_value);

  const std::string& kernel() const { return kernel_; }
  const std::map<std::string, ArgSignature, std::less<>>& tensors() const { return tensors_; }
  const std::map<std::string, Value, std::less<>>& scalars() const { return scalars_; }

  // "gemm|a:f16[128,64]{1,2}|b:f16[64,32]{2,1}|#alpha=1": stable, readable.
  std::string canonical() const;
  Hash128 hash() const { return hash128(canonical()); }
  nlohmann::json to_json() const;
  static ProblemKey from_json(const nlohmann::json& json);

  bool operator==(const ProblemKey& other) const { return canonical() == other.canonical(); }

 private:
  void claim(const std::string& name) const;

  std::string kernel_;
  std::map<std::string, ArgSignature, std::less<>> tensors_;
  std::map<std::string, Value, std::less<>> scalars_;
};

}  // namespace kiln
