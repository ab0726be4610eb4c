// The entry format: round trip, every kind of damage detected, and the
// golden file that pins format version 1 byte for byte.
#include <gtest/gtest.h>

#include "cache_test_util.hpp"
#include "entry_format.hpp"
#include "file_io.hpp"
#include "kiln/cache/artifact_cache.hpp"

namespace kiln {
namespace {

const Hash128 kKey = hash128("entry-format-test");

std::string sample_entry() {
  return cache::encode_entry(kKey, R"({"format":"cubin"})", "payload bytes \x01\x02\x03");
}

TEST(EntryFormat, RoundTrip) {
  std::string bytes = sample_entry();
  ASSERT_EQ(bytes.size(), cache::kEntryHeaderSize + 18 + 17);
  Result<cache::DecodedEntry> d = cache::decode_entry(bytes, kKey);
  ASSERT_TRUE(d.ok()) << d.error().describe();
  EXPECT_EQ(d->meta_json, R"({"format":"cubin"})");
  EXPECT_EQ(d->payload, "payload bytes \x01\x02\x03");
}

TEST(EntryFormat, EveryTruncationIsDetected) {
  std::string bytes = sample_entry();
  for (std::size_t n = 0; n < bytes.size(); ++n) {
    Result<cache::DecodedEntry> d = cache::decode_entry(std::string_view(bytes).substr(0, n), kKey);
    ASSERT_FALSE(d.ok()) << "truncated to " << n << " bytes was accepted";
    EXPECT_EQ(d.error().code, ErrorCode::kCorrupt);
  }
  Result<cache::DecodedEntry> extended = cache::decode_entry(bytes + "x", kKey);
  EXPECT_FALSE(extended.ok());
}

TEST(EntryFormat, EverySingleBitFlipIsDetected) {
  const std::string good = sample_entry();
  for (std::size_t byte = 0; byte < good.size(); ++byte) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string bad = good;
      bad[byte] = static_cast<char>(bad[byte] ^ (1 << bit));
      ASSERT_FALSE(cache::decode_entry(bad, kKey).ok())
          << "flip at byte " << byte << " bit " << bit;
    }
  }
}

TEST(EntryFormat, WrongVersionAndWrongKeyAreNamed) {
  std::string bytes = sample_entry();
  bytes[8] = 2;  // format version 2, checksum left as is
  Result<cache::DecodedEntry> d = cache::decode_entry(bytes, kKey);
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.error().message.find("format version 2"), std::string::npos) << d.error().message;
  Result<cache::DecodedEntry> other = cache::decode_entry(sample_entry(), hash128("other"));
  ASSERT_FALSE(other.ok());
  EXPECT_NE(other.error().message.find("does not match its file name"), std::string::npos);
}

// If this fails, the entry layout changed: bump kArtifactFormatVersion,
// then add a new golden file (kiln_cache_worker write-golden DIR) rather
// than editing this one.
TEST(EntryFormat, GoldenFilePinsVersion1) {
  ASSERT_EQ(kArtifactFormatVersion, 1u);
  Result<std::string> golden = testing::read_test_file(
      std::filesystem::path(KILN_CACHE_GOLDEN_DIR) / "artifact_entry_v1.bin");
  ASSERT_TRUE(golden.ok()) << golden.error().describe();
  const std::string binary(
      "\x7f"
      "ELF fake cubin bytes\x00\x01\x02",
      24);
  const nlohmann::json meta = {
      {"format", "cubin"}, {"arch", "sm_90a"}, {"lowered_names", {"_Z4gemmILi64EEvv"}}};
  EXPECT_EQ(*golden, cache::encode_entry(hash128("golden-entry"), meta.dump(), binary))
      << "the artifact entry layout changed without a format version bump";
  Result<cache::DecodedEntry> d = cache::decode_entry(*golden, hash128("golden-entry"));
  ASSERT_TRUE(d.ok()) << d.error().describe();
  EXPECT_EQ(d->payload, binary);
  EXPECT_EQ(nlohmann::json::parse(d->meta_json), meta);
  EXPECT_EQ(golden->substr(0, 8), "KILN-ART");
}

}  // namespace
}  // namespace kiln
