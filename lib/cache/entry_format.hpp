// The bytes of one artifact entry file. Fixed 64-byte header, then the
// metadata JSON, then the payload; integers little-endian:
//
//   0  char[8]  magic "KILN-ART"
//   8  u32      format version (kArtifactFormatVersion)
//  12  u32      header size (64)
//  16  u64,u64  key (Hash128 high, low): must match the file name
//  32  u64      metadata size
//  40  u64      payload size
//  48  u64,u64  XXH3-128 of bytes [0,48) + metadata + payload
//
// tests/cache/golden/artifact_entry_v1.bin must mirror this byte for byte;
// any change here bumps kArtifactFormatVersion and adds a new golden file.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "kiln/core/error.hpp"
#include "kiln/core/hash.hpp"

namespace kiln::cache {

inline constexpr std::string_view kEntryMagic = "KILN-ART";
inline constexpr std::size_t kEntryHeaderSize = 64;

std::string encode_entry(const Hash128& key, std::string_view meta_json, std::string_view payload);

struct DecodedEntry {
  std::string_view meta_json;
  std::string_view payload;
};

// Checks everything the header promises; kCorrupt with the reason
// (truncated, bad magic, format version N, key mismatch, checksum) when any
// check fails. The views point into `bytes`.
Result<DecodedEntry> decode_entry(std::string_view bytes, const Hash128& expected_key);

}  // namespace kiln::cache
