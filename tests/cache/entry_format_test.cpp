// The artifact file formats (index entry, program): round trip, every kind
// of damage detected, the golden files that pin format version 2 byte for
// byte, and version 1 refused by name.
#include <gtest/gtest.h>

#include <tuple>

#include "cache_test_util.hpp"
#include "entry_format.hpp"
#include "kiln/cache/artifact_cache.hpp"
#include "kiln/cache/file_io.hpp"

namespace kiln {
namespace {

const Hash128 kKey = hash128("entry-format-test");
const std::string kPayload = "payload bytes \x01\x02\x03";

std::string sample_index() {
  return cache::encode_index(kKey, cache::program_hash(kPayload), R"({"format":"cubin"})");
}
std::string sample_program() {
  return cache::encode_program(kPayload);
}

TEST(EntryFormat, RoundTrip) {
  std::string index = sample_index();
  ASSERT_EQ(index.size(), cache::kEntryHeaderSize + 18);
  Result<cache::DecodedEntry> d = cache::decode_entry(index, cache::EntryKind::kIndex, kKey);
  ASSERT_TRUE(d.ok()) << d.error().describe();
  EXPECT_EQ(d->meta_json, R"({"format":"cubin"})");
  EXPECT_TRUE(d->payload.empty());
  EXPECT_EQ(d->program, cache::program_hash(kPayload));
  EXPECT_EQ(cache::peek_program(index), cache::program_hash(kPayload));

  std::string program = sample_program();
  ASSERT_EQ(program.size(), cache::kEntryHeaderSize + 17);
  Result<cache::DecodedEntry> p =
      cache::decode_entry(program, cache::EntryKind::kProgram, cache::program_hash(kPayload));
  ASSERT_TRUE(p.ok()) << p.error().describe();
  EXPECT_EQ(p->payload, kPayload);
  EXPECT_TRUE(p->meta_json.empty());
  // One kind is never read as the other.
  EXPECT_FALSE(cache::decode_entry(index, cache::EntryKind::kProgram, kKey).ok());
  EXPECT_FALSE(cache::decode_entry(program, cache::EntryKind::kIndex, p->program).ok());
}

TEST(EntryFormat, EveryTruncationIsDetected) {
  for (const auto& [bytes, kind, name] :
       {std::tuple{sample_index(), cache::EntryKind::kIndex, kKey},
        std::tuple{sample_program(), cache::EntryKind::kProgram, cache::program_hash(kPayload)}}) {
    for (std::size_t n = 0; n < bytes.size(); ++n) {
      Result<cache::DecodedEntry> d =
          cache::decode_entry(std::string_view(bytes).substr(0, n), kind, name);
      ASSERT_FALSE(d.ok()) << "truncated to " << n << " bytes was accepted";
      EXPECT_EQ(d.error().code, ErrorCode::kCorrupt);
    }
    EXPECT_FALSE(cache::decode_entry(bytes + "x", kind, name).ok());
  }
}

TEST(EntryFormat, EverySingleBitFlipIsDetected) {
  for (const auto& [good, kind, name] :
       {std::tuple{sample_index(), cache::EntryKind::kIndex, kKey},
        std::tuple{sample_program(), cache::EntryKind::kProgram, cache::program_hash(kPayload)}}) {
    for (std::size_t byte = 0; byte < good.size(); ++byte) {
      for (int bit = 0; bit < 8; ++bit) {
        std::string bad = good;
        bad[byte] = static_cast<char>(bad[byte] ^ (1 << bit));
        ASSERT_FALSE(cache::decode_entry(bad, kind, name).ok())
            << "flip at byte " << byte << " bit " << bit;
      }
    }
  }
}

TEST(EntryFormat, AProgramWhoseBytesDoNotHashToItsNameIsRefused) {
  // A well-formed program file under another program's name (renamed by
  // hand, or a hash collision planted on purpose) is never served.
  Result<cache::DecodedEntry> d =
      cache::decode_entry(sample_program(), cache::EntryKind::kProgram, hash128("other"));
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.error().message.find("does not match its file name"), std::string::npos);
}

TEST(EntryFormat, WrongVersionAndWrongKeyAreNamed) {
  std::string bytes = sample_index();
  bytes[8] = 3;  // format version 3, checksum left as is
  Result<cache::DecodedEntry> d = cache::decode_entry(bytes, cache::EntryKind::kIndex, kKey);
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.error().message.find("format version 3"), std::string::npos) << d.error().message;
  Result<cache::DecodedEntry> other =
      cache::decode_entry(sample_index(), cache::EntryKind::kIndex, hash128("other"));
  ASSERT_FALSE(other.ok());
  EXPECT_NE(other.error().message.find("does not match its file name"), std::string::npos);
}

// If this fails, the layout changed: bump kArtifactFormatVersion, then add
// new golden files (kiln_cache_worker write-golden DIR) rather than
// editing these.
TEST(EntryFormat, GoldenFilesPinVersion2) {
  ASSERT_EQ(kArtifactFormatVersion, 2u);
  const std::filesystem::path dir(KILN_CACHE_GOLDEN_DIR);
  Result<std::string> index = testing::read_test_file(dir / "artifact_index_v2.bin");
  Result<std::string> program = testing::read_test_file(dir / "artifact_program_v2.bin");
  ASSERT_TRUE(index.ok()) << index.error().describe();
  ASSERT_TRUE(program.ok()) << program.error().describe();
  const std::string binary(
      "\x7f"
      "ELF fake cubin bytes\x00\x01\x02",
      24);
  const nlohmann::json meta = {
      {"format", "cubin"}, {"arch", "sm_90a"}, {"lowered_name", "_Z4gemmILi64EEvv"}};
  const Hash128 name = cache::program_hash(binary);
  EXPECT_EQ(*index, cache::encode_index(hash128("golden-entry"), name, meta.dump()))
      << "the artifact index layout changed without a format version bump";
  EXPECT_EQ(*program, cache::encode_program(binary))
      << "the artifact program layout changed without a format version bump";
  Result<cache::DecodedEntry> i =
      cache::decode_entry(*index, cache::EntryKind::kIndex, hash128("golden-entry"));
  ASSERT_TRUE(i.ok()) << i.error().describe();
  EXPECT_EQ(i->program, name);
  EXPECT_EQ(nlohmann::json::parse(i->meta_json), meta);
  Result<cache::DecodedEntry> p = cache::decode_entry(*program, cache::EntryKind::kProgram, name);
  ASSERT_TRUE(p.ok()) << p.error().describe();
  EXPECT_EQ(p->payload, binary);
  EXPECT_EQ(index->substr(0, 8), "KILN-ART");
  EXPECT_EQ(program->substr(0, 8), "KILN-PRG");
}

// A version 1 entry (every key a whole copy of its program) is not read:
// named as the older format, so a lookup discards it and recompiles.
TEST(EntryFormat, Version1EntriesAreRefusedAsTheOlderFormat) {
  Result<std::string> v1 = testing::read_test_file(std::filesystem::path(KILN_CACHE_GOLDEN_DIR) /
                                                   "artifact_entry_v1.bin");
  ASSERT_TRUE(v1.ok()) << v1.error().describe();
  Result<cache::DecodedEntry> d =
      cache::decode_entry(*v1, cache::EntryKind::kIndex, hash128("golden-entry"));
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.error().code, ErrorCode::kCorrupt);
  EXPECT_NE(d.error().message.find("format version 1, this Kiln reads 2"), std::string::npos)
      << d.error().message;
  EXPECT_FALSE(cache::peek_program(*v1).has_value());
}

}  // namespace
}  // namespace kiln
