// The bytes of the artifact cache's two kinds of file (format version 2).
// A compiled program is stored once, named by the hash of its bytes; each
// specialization it serves has a small index entry, named by its artifact
// key, that names the program. Both share one 80-byte header, then the
// metadata JSON, then the payload; integers little-endian:
//
//   0  char[8]  magic "KILN-ART" (index entry) or "KILN-PRG" (program)
//   8  u32      format version (kArtifactFormatVersion)
//  12  u32      header size (80)
//  16  u64,u64  name (Hash128 high, low): the artifact key of an index
//               entry, the content hash of a program; must match the file name
//  32  u64,u64  program: the content hash of the program an index entry
//               names (of a program: its own name)
//  48  u64      metadata size (a program: 0)
//  56  u64      payload size (an index entry: 0)
//  64  u64,u64  XXH3-128 of bytes [0,64) + metadata + payload
//
// A program's payload must also hash (program_hash) to its name. The index
// keeps the magic of version 1, so a version 1 entry is named as such
// ("format version 1, this Kiln reads 2") and discarded like any damage.
// tests/cache/golden/artifact_index_v2.bin and artifact_program_v2.bin
// mirror this byte for byte; any change here bumps kArtifactFormatVersion
// and adds new golden files.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "kiln/core/error.hpp"
#include "kiln/core/hash.hpp"

namespace kiln::cache {

enum class EntryKind { kIndex, kProgram };

inline constexpr std::string_view kIndexMagic = "KILN-ART";
inline constexpr std::string_view kProgramMagic = "KILN-PRG";
inline constexpr std::size_t kEntryHeaderSize = 80;

// The name a program is stored under: XXH3-128 of its bytes, the same hash
// Artifact::to_json records as "binary_hash".
Hash128 program_hash(std::string_view bytes);

// An index entry: artifact `key` -> `program`, with the specialization's
// metadata (lowered name, config, log...).
std::string encode_index(const Hash128& key, const Hash128& program, std::string_view meta_json);
// A program file, named program_hash(payload).
std::string encode_program(std::string_view payload);

struct DecodedEntry {
  Hash128 program;  // what an index entry names; a program's own name
  std::string_view meta_json;
  std::string_view payload;
};

// Checks everything the header promises; kCorrupt with the reason
// (truncated, bad magic, format version N, name mismatch, checksum, a
// program whose bytes do not hash to its name) when any check fails. The
// views point into `bytes`.
Result<DecodedEntry> decode_entry(std::string_view bytes, EntryKind kind,
                                  const Hash128& expected_name);

// The program named by the header of an index entry (at least
// kEntryHeaderSize bytes), without the checksum: prune reads only headers to
// count a program's references. nullopt when it is no version 2 index.
std::optional<Hash128> peek_program(std::string_view header);

}  // namespace kiln::cache
