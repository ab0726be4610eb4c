// Dynamic shapes: which dimensions of an op's inputs vary from call to call
// (the token count of a batch), how a size maps to the bucket it is tuned
// for, and which dimensions follow from others. The profiles an op is tuned
// on are the product of the buckets; at run time a call's shape maps to its
// nearest profile.
//
//   TuningSpec spec;
//   spec.dynamic.push_back(DynamicDim::of(0, 0, power_of_two_buckets(1, 4096)));
//   spec.constraints.push_back({2, 0, [](auto p) { return p[0]; }});  // out rows = x rows
//   spec.max_bucket = 1024;  // sizes above map to 1024
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "kiln/tuner/args.hpp"
#include "kiln/tuner/buckets.hpp"

namespace kiln {

// One varying dimension: tensor `input` (its index in the ArgList), dim `dim`.
// Its buckets and map are a BucketRule (kiln/tuner/buckets.hpp), the rule
// the autotuner's key takes too; here the buckets are required (each is a
// profile tuned ahead of the calls).
struct DynamicDim : BucketRule {
  std::size_t input = 0;
  std::size_t dim = 0;

  static DynamicDim of(std::size_t input, std::size_t dim, std::vector<std::int64_t> buckets);
};

// A dimension inferred from the profile: the value of the dynamic dims'
// buckets, in TuningSpec::dynamic order (e.g. an output's rows = profile[0]).
struct DimConstraint {
  std::size_t input = 0;
  std::size_t dim = 0;
  std::function<std::int64_t(std::span<const std::int64_t> profile)> infer;
};

// Fills generated tuning inputs with realistic data (runs after Kiln's own
// fill: floating tensors random in [-1, 1], integer tensors the call's
// values repeated so indices stay in range).
using InputsPreHook = std::function<void(ArgList& inputs)>;

struct TuningSpec {
  std::vector<DynamicDim> dynamic;
  std::vector<DimConstraint> constraints;
  // Cap on the largest bucket of every dynamic dim (0: none); sizes above
  // it map to the largest remaining bucket.
  std::int64_t max_bucket = 0;
  InputsPreHook pre_hook;

  // Sorts, dedupes and caps every dim's buckets; throws kiln::Error naming
  // the dim when one is left without buckets, a constraint has no infer, or
  // there are more than 8 dynamic dims.
  // choose_one() calls it on first use of a spec; calling it again is cheap.
  void finalize();
  bool finalized() const { return finalized_; }

  // The bucket `size` maps to for dynamic dim `i` (finalized spec).
  std::int64_t bucket_of(std::size_t i, std::int64_t size) const;
  // The call's profile: one bucket per dynamic dim. Throws kiln::Error
  // naming the input when it is not a tensor or lacks the dim.
  std::vector<std::int64_t> profile_of(const ArgList& inputs) const;
  // profile_of() into `out` (dynamic.size() entries), without allocating.
  void profile_into(const ArgList& inputs, std::span<std::int64_t> out) const;
  // Every profile: the product of the buckets, the first dim slowest.
  std::vector<std::vector<std::int64_t>> profiles() const;
  // The shape `inputs[index]` has under `profile` (dynamic dims set to
  // their bucket, constrained dims inferred, the rest kept).
  std::vector<std::int64_t> shape_under(const ArgList& inputs, std::size_t index,
                                        std::span<const std::int64_t> profile) const;

 private:
  bool finalized_ = false;
};

// Holds the memory of generated tuning inputs. On a device, buffers; on the
// host (no device), vectors.
class GeneratedInputs {
 public:
  ArgList args;
  std::vector<Buffer> buffers;
  std::vector<std::vector<std::byte>> host;
};

// Inputs of the call's op reshaped to `profile`: tensors allocated
// contiguous on `device` (host memory when null), floating data random
// (seeded, so every run profiles the same numbers), integer data the call's
// own values repeated, scalars copied, then `spec.pre_hook`. Errors when
// allocation or a copy fails.
Result<GeneratedInputs> make_profile_inputs(const ArgList& inputs, const TuningSpec& spec,
                                            std::span<const std::int64_t> profile, Device* device);

}  // namespace kiln
