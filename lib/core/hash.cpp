#include "kiln/core/hash.hpp"

#include <xxhash.h>

#include <cstring>

namespace kiln {

namespace {

constexpr char kHexDigits[] = "0123456789abcdef";

void append_hex(std::string& out, std::uint64_t word) {
  for (int shift = 60; shift >= 0; shift -= 4) out += kHexDigits[(word >> shift) & 0xf];
}

std::optional<std::uint64_t> parse_hex_word(std::string_view text) {
  std::uint64_t word = 0;
  for (char c : text) {
    int digit;
    if (c >= '0' && c <= '9')
      digit = c - '0';
    else if (c >= 'a' && c <= 'f')
      digit = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F')
      digit = c - 'A' + 10;
    else
      return std::nullopt;
    word = (word << 4) | static_cast<std::uint64_t>(digit);
  }
  return word;
}

}  // namespace

std::string Hash128::hex() const {
  std::string out;
  out.reserve(32);
  append_hex(out, high);
  append_hex(out, low);
  return out;
}

std::optional<Hash128> Hash128::from_hex(std::string_view text) {
  if (text.size() != 32) return std::nullopt;
  auto high = parse_hex_word(text.substr(0, 16));
  auto low = parse_hex_word(text.substr(16));
  if (!high || !low) return std::nullopt;
  return Hash128{*high, *low};
}

Hash128 hash128(std::string_view bytes) {
  XXH128_hash_t h = XXH3_128bits(bytes.data(), bytes.size());
  return Hash128{h.high64, h.low64};
}

struct Hasher::State {
  XXH3_state_t xxh;
};

Hasher::Hasher() : state_(std::make_unique<State>()) {
  XXH3_128bits_reset(&state_->xxh);
}
Hasher::~Hasher() = default;
Hasher::Hasher(Hasher&&) noexcept = default;
Hasher& Hasher::operator=(Hasher&&) noexcept = default;

Hasher& Hasher::field(std::string_view bytes) {
  std::uint64_t size = bytes.size();
  XXH3_128bits_update(&state_->xxh, &size, sizeof size);
  XXH3_128bits_update(&state_->xxh, bytes.data(), bytes.size());
  return *this;
}

Hasher& Hasher::field(std::int64_t number) {
  unsigned char bytes[8];
  // Little-endian explicitly, so keys are the same on every host.
  for (int i = 0; i < 8; ++i)
    bytes[i] = static_cast<unsigned char>(static_cast<std::uint64_t>(number) >> (8 * i));
  return field(std::string_view(reinterpret_cast<const char*>(bytes), 8));
}

Hasher& Hasher::field(const Hash128& hash) {
  return field(hash.hex());
}

Hash128 Hasher::finish() const {
  XXH128_hash_t h = XXH3_128bits_digest(&state_->xxh);
  return Hash128{h.high64, h.low64};
}

}  // namespace kiln
