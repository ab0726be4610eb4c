// Programs stored once: a grouped program's bytes are written once, named
// by their content hash, and each specialization gets a small index entry
// naming them. Dedupe within a group and across groups, prune's rules (a
// program goes with the last entry naming it, never before; an unnamed one
// goes), and an entry whose program is missing is a miss, never a crash
// (artifact_repair_test.cpp: every repair leaves the cache clean).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>

#include "cache_test_util.hpp"
#include "kiln/cache/artifact_cache.hpp"

namespace kiln {
namespace {

using testing::options_for;
using testing::TempDir;
using testing::test_artifact;
using testing::test_key;

// Entry `i` of a group whose program is test_artifact(seed)'s bytes: the
// metadata differs per entry (lowered name, config), the bytes do not.
CachedArtifact group_member(int seed, int i, std::size_t size) {
  CachedArtifact a = test_artifact(seed, size);
  a.meta = {{"format", "cpu_object"}, {"lowered_name", "kiln_entry_" + std::to_string(i)}};
  return a;
}

struct FileCounts {
  std::size_t entries = 0, programs = 0;
  std::uint64_t bytes = 0;
};
FileCounts count_files(const ArtifactCache& cache) {
  FileCounts c;
  for (const auto& f : cache.scan(false)) {
    if (f.temporary) continue;
    ++(f.is_program ? c.programs : c.entries);
    c.bytes += f.size;
  }
  return c;
}

void set_mtime(const std::filesystem::path& path, std::int64_t seconds) {
  struct timespec times[2] = {{seconds, 0}, {seconds, 0}};
  ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, 0), 0) << path;
}

TEST(ArtifactPrograms, AGroupOfEightStoresItsProgramOnce) {
  TempDir dir;
  ArtifactCache cache(options_for(dir.path()));
  for (int i = 0; i < 8; ++i) {
    ASSERT_EQ(cache.store(test_key(i), group_member(1, i, 50'000)).value(), StoreOutcome::kWritten);
  }
  FileCounts files = count_files(cache);
  EXPECT_EQ(files.programs, 1u);
  EXPECT_EQ(files.entries, 8u);
  // One copy of the bytes plus eight small entries, not eight copies.
  EXPECT_LT(files.bytes, 50'000u + 8 * 1024);
  EXPECT_EQ(cache.stats().programs_written, 1u);
  EXPECT_EQ(cache.stats().programs_shared, 7u);

  // Each entry reads back with its own metadata and the shared bytes.
  ArtifactCache reader(options_for(dir.path()));
  const Hash128 program = hash128(test_artifact(1, 50'000).binary);
  for (int i = 0; i < 8; ++i) {
    auto hit = reader.lookup(test_key(i));
    ASSERT_NE(hit, nullptr) << i;
    EXPECT_EQ(hit->binary, test_artifact(1, 50'000).binary);
    EXPECT_EQ(hit->meta, group_member(1, i, 50'000).meta);
    EXPECT_EQ(hit->program, program);
  }
  EXPECT_TRUE(std::filesystem::exists(reader.program_path(program)));
  SweepReport verified = reader.verify(false);
  EXPECT_TRUE(verified.broken.empty());
  EXPECT_EQ(verified.entries, 8u);
  EXPECT_EQ(verified.programs, 1u);
}

TEST(ArtifactPrograms, TwoGroupsWithIdenticalBytesShareOneProgram) {
  TempDir dir;
  ArtifactCache cache(options_for(dir.path()));
  // Two groups (two kernels, say) whose compiled bytes happen to match,
  // stored by two cache objects as two runs would.
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(cache.store(test_key(i), group_member(7, i, 9000)).ok());
  ArtifactCache second(options_for(dir.path()));
  for (int i = 10; i < 14; ++i)
    ASSERT_TRUE(second.store(test_key(i), group_member(7, i, 9000)).ok());
  EXPECT_EQ(second.stats().programs_written, 0u);
  EXPECT_EQ(second.stats().programs_shared, 4u);
  FileCounts files = count_files(cache);
  EXPECT_EQ(files.programs, 1u);
  EXPECT_EQ(files.entries, 7u);
  // Different bytes: a program of their own.
  ASSERT_TRUE(cache.store(test_key(20), group_member(8, 0, 9000)).ok());
  EXPECT_EQ(count_files(cache).programs, 2u);
}

TEST(ArtifactPrograms, PruneDropsAProgramWithItsLastEntryAndNeverBefore) {
  TempDir dir;
  Options o = options_for(dir.path());
  o.cache_memory_bytes = 0;
  ArtifactCache cache(o);
  // Group A (three entries, program PA) used longest ago; group B newer.
  for (int i = 0; i < 3; ++i)
    ASSERT_TRUE(cache.store(test_key(i), group_member(1, i, 20'000)).ok());
  for (int i = 3; i < 5; ++i)
    ASSERT_TRUE(cache.store(test_key(i), group_member(2, i, 20'000)).ok());
  const auto pa = cache.program_path(hash128(test_artifact(1, 20'000).binary));
  const auto pb = cache.program_path(hash128(test_artifact(2, 20'000).binary));
  for (int i = 0; i < 5; ++i) set_mtime(cache.entry_path(test_key(i)), 1000 + i);
  // Programs are older than any entry: their own clock must not matter.
  set_mtime(pa, 500);
  set_mtime(pb, 500);

  // Just under the total: the oldest entry goes, its program stays (two
  // entries still name it).
  const std::uint64_t total = count_files(cache).bytes;
  SweepReport one = cache.prune(total - 1);
  EXPECT_EQ(one.removed_entries, 1u);
  EXPECT_FALSE(std::filesystem::exists(cache.entry_path(test_key(0))));
  EXPECT_TRUE(std::filesystem::exists(pa)) << "a program still named was dropped";
  EXPECT_TRUE(std::filesystem::exists(cache.entry_path(test_key(1))));

  // Down to what group B needs: A's other entries go, and PA with the last.
  SweepReport rest = cache.prune(25'000 + 2 * 1024);
  EXPECT_FALSE(std::filesystem::exists(cache.entry_path(test_key(1))));
  EXPECT_FALSE(std::filesystem::exists(cache.entry_path(test_key(2))));
  EXPECT_FALSE(std::filesystem::exists(pa)) << "a program no entry names survived";
  EXPECT_TRUE(std::filesystem::exists(pb));
  EXPECT_EQ(rest.entries, 2u);
  EXPECT_EQ(rest.programs, 1u);
  EXPECT_EQ(rest.bytes, count_files(cache).bytes);
  EXPECT_NE(cache.lookup(test_key(3)), nullptr);
  EXPECT_NE(cache.lookup(test_key(4)), nullptr);
  EXPECT_TRUE(cache.verify(false).broken.empty());
}

TEST(ArtifactPrograms, PruneDropsAnUnnamedProgramOnceNoWriterCanBeNamingIt) {
  TempDir dir;
  ArtifactCache cache(options_for(dir.path()));
  ASSERT_TRUE(cache.store(test_key(1), group_member(3, 0, 5000)).ok());
  const auto program = cache.program_path(hash128(test_artifact(3, 5000).binary));
  // Its only entry gone (removed by hand; a store that died between the
  // program and the entry leaves the same).
  std::filesystem::remove(cache.entry_path(test_key(1)));
  // Young: it may be a store in progress, about to write its entry.
  cache.prune(1ull << 30);
  EXPECT_TRUE(std::filesystem::exists(program)) << "a store in progress lost its program";
  set_mtime(program, 1000);
  SweepReport pruned = cache.prune(1ull << 30);
  EXPECT_FALSE(std::filesystem::exists(program)) << "an unnamed program was kept";
  EXPECT_EQ(pruned.removed_programs, 1u);
  EXPECT_EQ(pruned.removed_entries, 0u);
  EXPECT_EQ(pruned.programs, 0u);
  EXPECT_EQ(count_files(cache).bytes, 0u);
}

TEST(ArtifactPrograms, AnEntryWhoseProgramIsMissingIsAMissNeverACrash) {
  TempDir dir;
  ArtifactCache writer(options_for(dir.path()));
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(writer.store(test_key(i), group_member(4, i, 7000)).ok());
  const auto program = writer.program_path(hash128(test_artifact(4, 7000).binary));
  std::filesystem::remove(program);

  ArtifactCache reader(options_for(dir.path()));
  // What the removal left: three entries naming nothing.
  SweepReport verified = reader.verify(false);
  ASSERT_EQ(verified.broken.size(), 3u);
  EXPECT_NE(verified.broken[0].problem.find("which is missing"), std::string::npos)
      << verified.broken[0].problem;
  EXPECT_EQ(reader.lookup(test_key(0)), nullptr);
  EXPECT_EQ(reader.stats().misses, 1u);
  // The lookup took every entry naming the missing program with it.
  EXPECT_EQ(reader.stats().entries_dropped, 3u);
  EXPECT_TRUE(reader.verify(false).broken.empty());
  // The next store heals it: program first, then the entry.
  ASSERT_TRUE(reader.store(test_key(0), group_member(4, 0, 7000)).ok());
  reader.clear_memory();
  EXPECT_NE(reader.lookup(test_key(0)), nullptr);
  EXPECT_EQ(reader.lookup(test_key(1)), nullptr) << "a sibling dropped with the program is a miss";
  SweepReport removed = reader.verify(/*remove=*/true);
  EXPECT_TRUE(removed.broken.empty());
}

TEST(ArtifactPrograms, ADamagedProgramIsDiscardedAndRewritten) {
  TempDir dir;
  ArtifactCache writer(options_for(dir.path()));
  for (int i = 0; i < 2; ++i) ASSERT_TRUE(writer.store(test_key(i), group_member(5, i, 7000)).ok());
  const auto program = writer.program_path(hash128(test_artifact(5, 7000).binary));
  std::string bytes = testing::read_test_file(program).value();
  bytes[bytes.size() / 2] ^= 0x20;
  std::ofstream(program, std::ios::binary | std::ios::trunc) << bytes;

  ArtifactCache reader(options_for(dir.path()));
  EXPECT_EQ(reader.lookup(test_key(0)), nullptr);
  EXPECT_EQ(reader.stats().corrupt_discarded, 1u);
  EXPECT_FALSE(std::filesystem::exists(program)) << "a damaged program was left";
  // Its sibling's entry went with it, so the cache verifies clean.
  EXPECT_FALSE(std::filesystem::exists(reader.entry_path(test_key(1))));
  EXPECT_TRUE(reader.verify(false).broken.empty());
  EXPECT_EQ(reader.lookup(test_key(1)), nullptr);
  ASSERT_TRUE(reader.store(test_key(0), group_member(5, 0, 7000)).ok());
  EXPECT_EQ(reader.stats().programs_written, 1u);
  reader.clear_memory();
  EXPECT_NE(reader.lookup(test_key(0)), nullptr);
  EXPECT_TRUE(reader.verify(false).broken.empty());
}

}  // namespace
}  // namespace kiln
