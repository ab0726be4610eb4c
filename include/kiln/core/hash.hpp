// Hashing for every key in Kiln: XXH3-128, written as 32 lowercase hex digits.
#pragma once

#include <compare>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace kiln {

struct Hash128 {
  std::uint64_t high = 0;
  std::uint64_t low = 0;

  // 32 lowercase hex digits, high word first.
  std::string hex() const;
  // Inverse of hex(); nullopt unless given exactly 32 hex digits.
  static std::optional<Hash128> from_hex(std::string_view text);

  auto operator<=>(const Hash128&) const = default;
};

// One-shot XXH3-128 of a byte string.
Hash128 hash128(std::string_view bytes);

// Streaming XXH3-128. Every field is length-prefixed so that ("ab","c") and
// ("a","bc") hash differently: keys are built from several fields.
class Hasher {
 public:
  Hasher();
  ~Hasher();
  Hasher(const Hasher&) = delete;
  Hasher& operator=(const Hasher&) = delete;
  Hasher(Hasher&&) noexcept;
  Hasher& operator=(Hasher&&) noexcept;

  Hasher& field(std::string_view bytes);
  Hasher& field(std::int64_t number);
  Hasher& field(const Hash128& hash);
  Hash128 finish() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace kiln
