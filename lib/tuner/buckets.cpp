// Size buckets and the representative of a size (kiln/tuner/buckets.hpp).
#include "kiln/tuner/buckets.hpp"

#include <algorithm>

#include "kiln/core/error.hpp"

namespace kiln {

std::vector<std::int64_t> power_of_two_buckets(std::int64_t min, std::int64_t max) {
  if (min < 1 || max < min) {
    throw Error(ErrorCode::kInvalidArgument, "power_of_two_buckets(" + std::to_string(min) + ", " +
                                                 std::to_string(max) + "): needs 1 <= min <= max");
  }
  std::vector<std::int64_t> out;
  std::int64_t b = 1;
  while (b < min) b *= 2;
  for (; b <= max; b *= 2) out.push_back(b);
  if (out.empty() || out.back() != max) out.push_back(max);
  return out;
}

std::vector<std::int64_t> linear_buckets(std::int64_t step, std::int64_t max) {
  if (step < 1 || max < step) {
    throw Error(ErrorCode::kInvalidArgument, "linear_buckets(" + std::to_string(step) + ", " +
                                                 std::to_string(max) + "): needs 1 <= step <= max");
  }
  std::vector<std::int64_t> out;
  for (std::int64_t b = step; b <= max; b += step) out.push_back(b);
  return out;
}

std::int64_t BucketRule::representative(std::int64_t size, std::string_view what) const {
  if (buckets.empty() && !map) {
    throw Error(ErrorCode::kInvalidArgument,
                std::string(what) +
                    " has no buckets and no map: give it buckets (power_of_two_buckets(1, "
                    "4096), an explicit list) or a function from a size to its representative");
  }
  const std::int64_t v = map ? map(size) : size;
  if (buckets.empty()) {
    if (v >= 1) return v;
    throw Error(ErrorCode::kInvalidArgument,
                std::string(what) + ": its map answered " + std::to_string(v) + " for the size " +
                    std::to_string(size) + ": a representative is a size of 1 or more");
  }
  // NOTES: a scan, not a binary search: the buckets may come in any order
  // (a rule is a plain value, checked where it is used), and they are few.
  std::int64_t above = 0, largest = 0;
  for (std::int64_t b : buckets) {
    if (b < 1) {
      throw Error(ErrorCode::kInvalidArgument, std::string(what) + " has the bucket " +
                                                   std::to_string(b) +
                                                   ": every bucket is a size of 1 or more");
    }
    if (b >= v && (above == 0 || b < above)) above = b;
    largest = std::max(largest, b);
  }
  return above != 0 ? above : largest;
}

std::string KeyBucket::name() const {
  return dim ? arg + " dim " + std::to_string(*dim) : arg;
}

}  // namespace kiln
