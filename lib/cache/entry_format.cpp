#include "entry_format.hpp"

#include <xxhash.h>

#include <cstring>

#include "kiln/cache/artifact_cache.hpp"

namespace kiln::cache {

namespace {

void put_u32(std::string& out, std::size_t at, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out[at + i] = static_cast<char>((v >> (8 * i)) & 0xff);
}
void put_u64(std::string& out, std::size_t at, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) out[at + i] = static_cast<char>((v >> (8 * i)) & 0xff);
}
std::uint32_t get_u32(std::string_view in, std::size_t at) {
  std::uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(in[at + i]);
  return v;
}
std::uint64_t get_u64(std::string_view in, std::size_t at) {
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(in[at + i]);
  return v;
}

// The checksum covers the header fields before it, so a flipped bit in a
// size or the version is caught the same way as one in the payload.
Hash128 checksum(std::string_view header48, std::string_view meta, std::string_view payload) {
  XXH3_state_t state;
  XXH3_128bits_reset(&state);
  XXH3_128bits_update(&state, header48.data(), header48.size());
  XXH3_128bits_update(&state, meta.data(), meta.size());
  XXH3_128bits_update(&state, payload.data(), payload.size());
  XXH128_hash_t h = XXH3_128bits_digest(&state);
  return Hash128{h.high64, h.low64};
}

ErrorInfo corrupt(std::string reason) {
  return make_error(ErrorCode::kCorrupt, "corrupt cache entry: " + reason);
}

}  // namespace

std::string encode_entry(const Hash128& key, std::string_view meta_json, std::string_view payload) {
  std::string out(kEntryHeaderSize, '\0');
  std::memcpy(out.data(), kEntryMagic.data(), kEntryMagic.size());
  put_u32(out, 8, kArtifactFormatVersion);
  put_u32(out, 12, static_cast<std::uint32_t>(kEntryHeaderSize));
  put_u64(out, 16, key.high);
  put_u64(out, 24, key.low);
  put_u64(out, 32, meta_json.size());
  put_u64(out, 40, payload.size());
  Hash128 sum = checksum(std::string_view(out).substr(0, 48), meta_json, payload);
  put_u64(out, 48, sum.high);
  put_u64(out, 56, sum.low);
  out.reserve(kEntryHeaderSize + meta_json.size() + payload.size());
  out.append(meta_json);
  out.append(payload);
  return out;
}

Result<DecodedEntry> decode_entry(std::string_view bytes, const Hash128& expected_key) {
  if (bytes.size() < kEntryHeaderSize) {
    return corrupt("truncated header (" + std::to_string(bytes.size()) + " bytes)");
  }
  if (bytes.substr(0, kEntryMagic.size()) != kEntryMagic) return corrupt("bad magic");
  std::uint32_t version = get_u32(bytes, 8);
  if (version != kArtifactFormatVersion) {
    return corrupt("format version " + std::to_string(version) + ", this Kiln reads " +
                   std::to_string(kArtifactFormatVersion));
  }
  if (get_u32(bytes, 12) != kEntryHeaderSize) return corrupt("bad header size");
  Hash128 key{get_u64(bytes, 16), get_u64(bytes, 24)};
  if (key != expected_key) return corrupt("key " + key.hex() + " does not match its file name");
  std::uint64_t meta_size = get_u64(bytes, 32);
  std::uint64_t payload_size = get_u64(bytes, 40);
  std::uint64_t body = bytes.size() - kEntryHeaderSize;
  if (meta_size > body || payload_size != body - meta_size) {
    return corrupt("sizes (" + std::to_string(meta_size) + " + " + std::to_string(payload_size) +
                   ") do not match the file (" + std::to_string(body) +
                   " bytes after the header): truncated or extended");
  }
  std::string_view meta = bytes.substr(kEntryHeaderSize, meta_size);
  std::string_view payload = bytes.substr(kEntryHeaderSize + meta_size);
  Hash128 want{get_u64(bytes, 48), get_u64(bytes, 56)};
  if (checksum(bytes.substr(0, 48), meta, payload) != want) return corrupt("checksum mismatch");
  return DecodedEntry{meta, payload};
}

}  // namespace kiln::cache
