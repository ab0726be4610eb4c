// Keys of choose_one decisions: the 128-bit in-memory key (hot path, no
// allocation) and the ProblemKey persisted decisions are stored under.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "kiln/core/problem.hpp"
#include "kiln/framework/choose_one.hpp"

namespace kiln::internal {

// Dynamic dims an op may declare: the hot path keeps its profile on the
// stack, and a product of more dims than this could never be tuned anyway.
inline constexpr std::size_t kMaxDynamicDims = 8;

// Collects the words of a key on the stack and hashes them with XXH3-128
// at the end: one pass of a vectorised hash over ~100 bytes is cheaper than
// mixing word by word, and this runs on every choose_one call
// (bench/choose_one_bench.cpp). 128 bits, so distinct (op, runners,
// profile) collide with negligible probability.
class KeyMixer {
 public:
  void add(std::uint64_t v) {
    if (n_ == kWords) fold();
    words_[n_++] = v;
  }
  void add_bytes(std::string_view bytes);
  TacticKey finish() const;

 private:
  static constexpr std::size_t kWords = 32;
  void fold();  // hashes a full buffer into its first two words
  std::uint64_t words_[kWords];
  std::size_t n_ = 0;
};

// 64-bit digest of a string (RunnerId hashes).
std::uint64_t digest64(std::string_view bytes);

// The key of `inputs` under `profile` (one bucket per dynamic dim): dynamic
// dims take the profile's bucket, constrained dims their inferred value.
TacticKey key_under(std::string_view op, std::span<TunableRunner* const> runners,
                    const ArgList& inputs, const TuningSpec& spec,
                    std::span<const std::int64_t> profile);

// "op|runner@v|runner@v": the kernel name persisted records carry.
std::string persisted_name(std::string_view op, std::span<TunableRunner* const> runners);
// The persisted problem: dtype and profile shape of each tensor input.
ProblemKey persisted_problem(std::string_view op, std::span<TunableRunner* const> runners,
                             const ArgList& inputs, const TuningSpec& spec,
                             std::span<const std::int64_t> profile);

}  // namespace kiln::internal
