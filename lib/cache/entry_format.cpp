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

constexpr std::size_t kSummed = 64;  // header bytes the checksum covers

// The checksum covers the header fields before it, so a flipped bit in a
// size, the version or the program reference is caught the same way as one
// in the payload.
Hash128 checksum(std::string_view header, std::string_view meta, std::string_view payload) {
  XXH3_state_t state;
  XXH3_128bits_reset(&state);
  XXH3_128bits_update(&state, header.data(), header.size());
  XXH3_128bits_update(&state, meta.data(), meta.size());
  XXH3_128bits_update(&state, payload.data(), payload.size());
  XXH128_hash_t h = XXH3_128bits_digest(&state);
  return Hash128{h.high64, h.low64};
}

ErrorInfo corrupt(std::string reason) {
  return make_error(ErrorCode::kCorrupt, "corrupt cache entry: " + reason);
}

std::string encode(std::string_view magic, const Hash128& name, const Hash128& program,
                   std::string_view meta_json, std::string_view payload) {
  std::string out(kEntryHeaderSize, '\0');
  std::memcpy(out.data(), magic.data(), magic.size());
  put_u32(out, 8, kArtifactFormatVersion);
  put_u32(out, 12, static_cast<std::uint32_t>(kEntryHeaderSize));
  put_u64(out, 16, name.high);
  put_u64(out, 24, name.low);
  put_u64(out, 32, program.high);
  put_u64(out, 40, program.low);
  put_u64(out, 48, meta_json.size());
  put_u64(out, 56, payload.size());
  Hash128 sum = checksum(std::string_view(out).substr(0, kSummed), meta_json, payload);
  put_u64(out, 64, sum.high);
  put_u64(out, 72, sum.low);
  out.reserve(kEntryHeaderSize + meta_json.size() + payload.size());
  out.append(meta_json);
  out.append(payload);
  return out;
}

}  // namespace

Hash128 program_hash(std::string_view bytes) {
  return hash128(bytes);
}

std::string encode_index(const Hash128& key, const Hash128& program, std::string_view meta_json) {
  return encode(kIndexMagic, key, program, meta_json, {});
}

std::string encode_program(std::string_view payload) {
  const Hash128 name = program_hash(payload);
  return encode(kProgramMagic, name, name, {}, payload);
}

Result<DecodedEntry> decode_entry(std::string_view bytes, EntryKind kind,
                                  const Hash128& expected_name) {
  const bool index = kind == EntryKind::kIndex;
  // The version sits at the same place in both versions' headers: read it
  // before the size check, so an old entry is named as such.
  if (bytes.size() < 16) {
    return corrupt("truncated header (" + std::to_string(bytes.size()) + " bytes)");
  }
  const std::string_view magic = index ? kIndexMagic : kProgramMagic;
  if (bytes.substr(0, magic.size()) != magic) return corrupt("bad magic");
  std::uint32_t version = get_u32(bytes, 8);
  if (version != kArtifactFormatVersion) {
    return corrupt("format version " + std::to_string(version) + ", this Kiln reads " +
                   std::to_string(kArtifactFormatVersion));
  }
  if (bytes.size() < kEntryHeaderSize) {
    return corrupt("truncated header (" + std::to_string(bytes.size()) + " bytes)");
  }
  if (get_u32(bytes, 12) != kEntryHeaderSize) return corrupt("bad header size");
  Hash128 name{get_u64(bytes, 16), get_u64(bytes, 24)};
  if (name != expected_name) {
    return corrupt(std::string(index ? "key " : "program ") + name.hex() +
                   " does not match its file name");
  }
  Hash128 program{get_u64(bytes, 32), get_u64(bytes, 40)};
  std::uint64_t meta_size = get_u64(bytes, 48);
  std::uint64_t payload_size = get_u64(bytes, 56);
  std::uint64_t body = bytes.size() - kEntryHeaderSize;
  if (meta_size > body || payload_size != body - meta_size) {
    return corrupt("sizes (" + std::to_string(meta_size) + " + " + std::to_string(payload_size) +
                   ") do not match the file (" + std::to_string(body) +
                   " bytes after the header): truncated or extended");
  }
  std::string_view meta = bytes.substr(kEntryHeaderSize, meta_size);
  std::string_view payload = bytes.substr(kEntryHeaderSize + meta_size);
  Hash128 want{get_u64(bytes, 64), get_u64(bytes, 72)};
  if (checksum(bytes.substr(0, kSummed), meta, payload) != want) {
    return corrupt("checksum mismatch");
  }
  if (!index && (program != name || program_hash(payload) != name)) {
    return corrupt("program bytes do not hash to its name " + name.hex());
  }
  if (index && payload_size != 0) return corrupt("an index entry with a payload");
  return DecodedEntry{program, meta, payload};
}

std::optional<Hash128> peek_program(std::string_view header) {
  if (header.size() < kEntryHeaderSize || header.substr(0, kIndexMagic.size()) != kIndexMagic ||
      get_u32(header, 8) != kArtifactFormatVersion) {
    return std::nullopt;
  }
  return Hash128{get_u64(header, 32), get_u64(header, 40)};
}

}  // namespace kiln::cache
