// The remote value format (see envelope.hpp):
//   "KILNRC1" kind(1) flags(1: signed) key(16) payload-size(8, little endian)
//   payload checksum(16: XXH3-128 of everything before) [hmac(32)]
#include "remote/envelope.hpp"

#include <cstring>

namespace kiln::remote {
namespace {

constexpr char kMagic[] = "KILNRC1";
constexpr std::size_t kMagicSize = 7;
constexpr std::size_t kHeaderSize = kMagicSize + 1 + 1 + 16 + 8;
constexpr std::size_t kChecksumSize = 16;
constexpr std::size_t kMacSize = 32;

void put_u64(std::string& out, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
std::uint64_t get_u64(const char* p) {
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}
void put_hash(std::string& out, const Hash128& h) {
  put_u64(out, h.high);
  put_u64(out, h.low);
}
Hash128 get_hash(const char* p) {
  return Hash128{get_u64(p), get_u64(p + 8)};
}

// Compares in time independent of where the bytes differ (a MAC check).
int equal_time_compare(const char* a, const char* b, std::size_t n) {
  unsigned char diff = 0;
  for (std::size_t i = 0; i < n; ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff;
}

ErrorInfo refused(const Hash128& key, const std::string& why) {
  return make_error(ErrorCode::kCorrupt, "remote entry " + key.hex() + " refused: " + why);
}

}  // namespace

std::string seal(RemoteKind kind, const Hash128& key, const std::string& payload,
                 const std::string& secret) {
  std::string out(kMagic, kMagicSize);
  out.push_back(static_cast<char>(kind));
  out.push_back(secret.empty() ? '\0' : '\1');
  put_hash(out, key);
  put_u64(out, payload.size());
  out += payload;
  put_hash(out, hash128(out));
  if (!secret.empty()) out += hmac_sha256(secret, out);
  return out;
}

Result<Opened> open(const std::string& value, RemoteKind kind, const Hash128& key,
                    const std::string& secret) {
  if (value.size() < kHeaderSize + kChecksumSize)
    return refused(key, "not a Kiln remote entry: " + std::to_string(value.size()) +
                            " bytes is too short (an entry is at least " +
                            std::to_string(kHeaderSize + kChecksumSize) + ")");
  if (value.size() > kMaxValueBytes)
    return refused(key, "not a Kiln remote entry: " + std::to_string(value.size()) +
                            " bytes is too large (the limit is " + std::to_string(kMaxValueBytes) +
                            " bytes)");
  if (value.compare(0, kMagicSize, kMagic) != 0)
    return refused(
        key, "not a Kiln remote entry: it does not start with " + std::string(kMagic, kMagicSize));
  const char* p = value.data();
  if (p[kMagicSize] != static_cast<char>(kind))
    return refused(key, "it holds another kind of entry");
  const bool is_signed = p[kMagicSize + 1] == '\1';
  const std::uint64_t size = get_u64(p + kMagicSize + 2 + 16);
  const std::size_t body = kHeaderSize + size;
  const std::size_t want = body + kChecksumSize + (is_signed ? kMacSize : 0);
  if (size > value.size() || value.size() != want)
    return refused(key, "truncated or padded (" + std::to_string(value.size()) +
                            " bytes, the header says " + std::to_string(want) + ")");
  if (get_hash(p + body) != hash128(std::string_view(value.data(), body)))
    return refused(key, "its checksum does not match (corrupted)");
  if (get_hash(p + kMagicSize + 2) != key)
    return refused(key, "it was written for another key (" + get_hash(p + kMagicSize + 2).hex() +
                            "): a value copied onto this key");
  if (!secret.empty()) {
    if (!is_signed) return refused(key, "it is unsigned and KILN_REMOTE_CACHE_SECRET_FILE is set");
    const std::string mac = hmac_sha256(secret, value.substr(0, body + kChecksumSize));
    if (mac.size() != kMacSize ||
        equal_time_compare(mac.data(), p + body + kChecksumSize, kMacSize) != 0)
      return refused(key, "its signature does not verify (written with another secret, or forged)");
  }
  return Opened{value.substr(kHeaderSize, size), is_signed};
}

}  // namespace kiln::remote
