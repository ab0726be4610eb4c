// Keys of choose_one decisions: the 128-bit in-memory key (hot path, no
// allocation) and the ProblemKey persisted decisions are stored under.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "kiln/choose_one.hpp"
#include "kiln/problem.hpp"

namespace kiln::internal {

// Dynamic dims an op may declare: the hot path keeps its profile on the
// stack, and a product of more dims than this could never be tuned anyway.
inline constexpr std::size_t kMaxDynamicDims = 8;

// Two 64-bit lanes of murmur-style mixing over 64-bit words: not a
// cryptographic hash, but 128 bits of well-mixed state, so distinct
// (op, runners, profile) collide with negligible probability.
class KeyMixer {
 public:
  void add(std::uint64_t v) {
    a_ = fmix(a_ ^ v);
    b_ = fmix(b_ + v * 0x9e3779b97f4a7c15ull + 0x632be59bd9b4e019ull);
  }
  void add_bytes(std::string_view bytes);
  TacticKey finish() const { return TacticKey{fmix(a_ ^ n_), fmix(b_ + n_)}; }

 private:
  static std::uint64_t fmix(std::uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return x;
  }
  std::uint64_t a_ = 0x243f6a8885a308d3ull;
  std::uint64_t b_ = 0x13198a2e03707344ull;
  std::uint64_t n_ = 0;
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
