// Size buckets: the one vocabulary for sizes that vary from call to call,
// shared by the framework's choose_one (DynamicDim) and the autotuner's
// key (TunableKernel::buckets, @kiln.autotune(key=...)). A call's size maps
// to its bucket's representative; every size of a bucket shares the
// representative's tuning record.
//
//   TunableKernel k = ...;
//   k.buckets.push_back({"n", std::nullopt, {power_of_two_buckets(1, 4096)}});  // scalar n
//   k.buckets.push_back({"x", 0, {power_of_two_buckets(1, 4096)}});             // x's rows
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kiln {

// 1, 2, 4, ... up to `max` (and `max` itself when it is not a power of two),
// starting at the first power of two >= `min`.
std::vector<std::int64_t> power_of_two_buckets(std::int64_t min, std::int64_t max);
// step, 2*step, ... up to `max`.
std::vector<std::int64_t> linear_buckets(std::int64_t step, std::int64_t max);

// How a size maps to the size it is tuned for.
struct BucketRule {
  std::vector<std::int64_t> buckets;  // the sizes tuned for, in any order
  // Optional size -> bucket map. With buckets, its answer is snapped to the
  // nearest of them, so a map can never name a size that is not a bucket;
  // without, its answer is the representative as is (it must be >= 1).
  std::function<std::int64_t(std::int64_t)> map;

  // The representative of `size`: the smallest bucket >= map(size) (or
  // size), else the largest. Throws kiln::Error naming `what` and the fix
  // when the rule has neither buckets nor a map, a bucket is below 1, or a
  // map without buckets answers below 1.
  std::int64_t representative(std::int64_t size, std::string_view what = "a bucket rule") const;
};

// One entry of a tuning key whose size is bucketed: the value of integer
// scalar `arg` (dim unset), or dimension `dim` of tensor `arg`. The key
// holds the representative, not the call's size; what no rule names stays
// exact.
struct KeyBucket {
  std::string arg;
  std::optional<std::size_t> dim;
  BucketRule rule;

  // "n" or "x dim 0", as errors name it.
  std::string name() const;
};

}  // namespace kiln
