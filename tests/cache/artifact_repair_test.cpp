// Whatever a store or a repair leaves behind is valid or gone (issue 54).
// A program is stored once under its content hash, so a file found under
// that name is never trusted by the name alone: a store replaces it unless
// it checks out and holds the very bytes it would write. A program a lookup
// finds damaged or missing takes every index entry naming it with it. The
// class: every damage to a stored group, then every way Kiln touches it
// again (a warm run rebuilding one key, a cold run, `kiln compile`, a bare
// reader), and `verify` is clean after each.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <functional>

#include "cache_test_util.hpp"
#include "entry_format.hpp"
#include "kiln/cache/artifact_cache.hpp"

namespace kiln {
namespace {

using testing::options_for;
using testing::TempDir;
using testing::test_artifact;
using testing::test_key;

constexpr int kGroup = 4;
constexpr std::size_t kBytes = 30'000;

// Entry `i` of a group whose program is test_artifact(1)'s bytes.
CachedArtifact member(int i) {
  CachedArtifact a = test_artifact(1, kBytes);
  a.meta = {{"format", "cpu_object"}, {"lowered_name", "kiln_entry_" + std::to_string(i)}};
  return a;
}

Hash128 program_of_group() {
  return hash128(test_artifact(1, kBytes).binary);
}

// Entry 0 compiled alone, as a warm run rebuilds its winner: a program of
// one specialization, so other bytes than the group's.
CachedArtifact alone() {
  CachedArtifact a = test_artifact(3, 4000);
  a.meta = {{"format", "cpu_object"}, {"lowered_name", "kiln_entry_0"}};
  return a;
}

Options no_memory(const std::filesystem::path& dir) {
  Options o = options_for(dir);
  o.cache_memory_bytes = 0;  // every lookup reads the disk
  return o;
}

void write_bytes(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

void flip(const std::filesystem::path& path, std::size_t at) {
  std::string bytes = testing::read_test_file(path).value();
  bytes[at] ^= 0x40;
  write_bytes(path, bytes);
}

struct Damage {
  const char* name;
  std::function<void(const ArtifactCache&)> apply;
  // A lookup leaves a file it refuses (not its owner's, writable by others)
  // in place, with a warning naming the fix: only a store of that very
  // program replaces it.
  bool readers_repair = true;
};

std::vector<Damage> damages() {
  auto program = [](const ArtifactCache& c) { return c.program_path(program_of_group()); };
  auto entry0 = [](const ArtifactCache& c) { return c.entry_path(test_key(0)); };
  return {
      {"program: one payload byte flipped (same size)",
       [=](const ArtifactCache& c) {
         flip(program(c), std::filesystem::file_size(program(c)) - 10);
       }},
      {"program: one header byte flipped", [=](const ArtifactCache& c) { flip(program(c), 20); }},
      {"program: cut in half",
       [=](const ArtifactCache& c) {
         std::filesystem::resize_file(program(c), std::filesystem::file_size(program(c)) / 2);
       }},
      {"program: removed", [=](const ArtifactCache& c) { std::filesystem::remove(program(c)); }},
      {"program: writable by the group (refused)",
       [=](const ArtifactCache& c) { ASSERT_EQ(::chmod(program(c).c_str(), 0660), 0); }, false},
      {"entry: one byte flipped",
       [=](const ArtifactCache& c) { flip(entry0(c), std::filesystem::file_size(entry0(c)) - 3); }},
      {"entry: cut in half",
       [=](const ArtifactCache& c) { std::filesystem::resize_file(entry0(c), 40); }},
      {"entry: of format version 1",
       [=](const ArtifactCache& c) {
         write_bytes(entry0(c),
                     testing::read_test_file(std::filesystem::path(KILN_CACHE_GOLDEN_DIR) /
                                             "artifact_entry_v1.bin")
                         .value());
       }},
  };
}

// Every way Kiln touches a stored group again, each through a cache object
// of a new process's kind (no memory layer).
struct Repair {
  const char* name;
  std::function<void(ArtifactCache&)> run;
  bool reader_only = false;
  bool rebuilds_alone = false;  // key 0 now holds alone()'s bytes
};

std::vector<Repair> repairs() {
  return {
      // A warm `kiln tune`: the winner's key is looked up, rebuilt alone on a miss.
      {"lookup of one key, rebuilt alone on a miss",
       [](ArtifactCache& c) {
         if (!c.lookup(test_key(0))) {
           ASSERT_TRUE(c.store(test_key(0), alone()).ok());
         }
       },
       false, true},
      // The same, rebuilt with its group's bytes.
      {"lookup of one key, stored on a miss",
       [](ArtifactCache& c) {
         if (!c.lookup(test_key(0))) {
           ASSERT_TRUE(c.store(test_key(0), member(0)).ok());
         }
       }},
      // A tune over a partly filled cache: every key looked up, the misses compiled.
      {"lookup of every key, the misses stored",
       [](ArtifactCache& c) {
         std::vector<int> missed;
         for (int i = 0; i < kGroup; ++i)
           if (!c.lookup(test_key(i))) missed.push_back(i);
         for (int i : missed) ASSERT_TRUE(c.store(test_key(i), member(i)).ok());
       }},
      // `kiln compile`: no lookup, every key stored.
      {"store of every key",
       [](ArtifactCache& c) {
         for (int i = 0; i < kGroup; ++i) ASSERT_TRUE(c.store(test_key(i), member(i)).ok());
       }},
      // A process that only reads (a warm run with a read-only tier above it, a framework op).
      {"lookup of every key",
       [](ArtifactCache& c) {
         for (int i = 0; i < kGroup; ++i) c.lookup(test_key(i));
       },
       true},
  };
}

std::string broken_list(const SweepReport& report) {
  std::string out;
  for (const auto& f : report.broken) out += "\n  " + f.problem;
  return out;
}

TEST(ArtifactRepair, EveryRepairOfEveryDamageLeavesVerifyClean) {
  for (const Damage& damage : damages()) {
    for (const Repair& repair : repairs()) {
      if (!damage.readers_repair && (repair.reader_only || repair.rebuilds_alone)) continue;
      SCOPED_TRACE(std::string(damage.name) + ", then " + repair.name);
      TempDir dir;
      {
        ArtifactCache writer(no_memory(dir.path()));
        for (int i = 0; i < kGroup; ++i) ASSERT_TRUE(writer.store(test_key(i), member(i)).ok());
        damage.apply(writer);
      }
      ArtifactCache cache(no_memory(dir.path()));
      repair.run(cache);
      SweepReport verified = cache.verify(false);
      EXPECT_TRUE(verified.broken.empty()) << broken_list(verified);
      // What is left is served whole: every entry that is there reads back
      // with the group's bytes; a store's key is there.
      ArtifactCache reader(no_memory(dir.path()));
      for (int i = 0; i < kGroup; ++i) {
        auto hit = reader.lookup(test_key(i));
        if (hit) {
          const bool rebuilt = repair.rebuilds_alone && i == 0 && hit->binary == alone().binary;
          EXPECT_TRUE(rebuilt || hit->binary == member(i).binary) << i;
        } else {
          EXPECT_TRUE(repair.reader_only || i != 0) << "the stored key is a miss";
        }
      }
      EXPECT_EQ(reader.stats().corrupt_discarded, 0u);
    }
  }
}

// `kiln compile` run twice over a damaged program: the second store does not
// take the file by its name, it puts the bytes back, and every entry hits.
TEST(ArtifactRepair, AStoreReplacesADamagedProgramOfItsNameByteForByte) {
  TempDir dir;
  ArtifactCache writer(no_memory(dir.path()));
  for (int i = 0; i < kGroup; ++i) ASSERT_TRUE(writer.store(test_key(i), member(i)).ok());
  const auto path = writer.program_path(program_of_group());
  const std::string good = testing::read_test_file(path).value();
  flip(path, good.size() - 10);

  ArtifactCache again(no_memory(dir.path()));
  for (int i = 0; i < kGroup; ++i) ASSERT_TRUE(again.store(test_key(i), member(i)).ok());
  EXPECT_EQ(testing::read_test_file(path).value(), good) << "the damaged bytes were kept";
  EXPECT_EQ(again.stats().programs_repaired, 1u);
  EXPECT_EQ(again.stats().programs_written, 1u);
  EXPECT_EQ(again.stats().programs_shared, kGroup - 1u);
  EXPECT_TRUE(again.verify(false).broken.empty());
  for (int i = 0; i < kGroup; ++i) EXPECT_NE(again.lookup(test_key(i)), nullptr) << i;
}

// A healthy program of the same bytes is kept and touched, not rewritten:
// the check costs a read, never a write.
TEST(ArtifactRepair, AHealthyProgramIsKeptNotRewritten) {
  TempDir dir;
  ArtifactCache writer(no_memory(dir.path()));
  ASSERT_TRUE(writer.store(test_key(0), member(0)).ok());
  const auto path = writer.program_path(program_of_group());
  struct stat before {};
  ASSERT_EQ(::stat(path.c_str(), &before), 0);
  ArtifactCache again(no_memory(dir.path()));
  ASSERT_TRUE(again.store(test_key(1), member(1)).ok());
  struct stat after {};
  ASSERT_EQ(::stat(path.c_str(), &after), 0);
  EXPECT_EQ(after.st_ino, before.st_ino) << "a healthy program was replaced";
  EXPECT_EQ(again.stats().programs_shared, 1u);
  EXPECT_EQ(again.stats().programs_repaired, 0u);
}

// A warm run whose winner's program is damaged: the program goes, and the
// other entries of its group with it (they would name a removed file); the
// winner, rebuilt alone, is a program of its own.
TEST(ArtifactRepair, ADiscardedProgramTakesEveryEntryNamingItWithIt) {
  TempDir dir;
  ArtifactCache writer(no_memory(dir.path()));
  for (int i = 0; i < kGroup; ++i) ASSERT_TRUE(writer.store(test_key(i), member(i)).ok());
  // Another group, which must not be touched.
  CachedArtifact other = test_artifact(2, 5000);
  ASSERT_TRUE(writer.store(test_key(100), other).ok());
  const auto program = writer.program_path(program_of_group());
  flip(program, std::filesystem::file_size(program) - 10);

  ArtifactCache warm(no_memory(dir.path()));
  EXPECT_EQ(warm.lookup(test_key(3)), nullptr);
  EXPECT_EQ(warm.stats().corrupt_discarded, 1u);
  EXPECT_EQ(warm.stats().entries_dropped, static_cast<std::uint64_t>(kGroup));
  EXPECT_FALSE(std::filesystem::exists(program));
  for (int i = 0; i < kGroup; ++i)
    EXPECT_FALSE(std::filesystem::exists(warm.entry_path(test_key(i)))) << i;
  ASSERT_TRUE(warm.store(test_key(3), alone()).ok());  // the winner compiled alone
  SweepReport verified = warm.verify(false);
  EXPECT_TRUE(verified.broken.empty()) << broken_list(verified);
  EXPECT_EQ(verified.entries, 2u);
  EXPECT_EQ(verified.programs, 2u);
  EXPECT_NE(warm.lookup(test_key(100)), nullptr) << "another group's entry was dropped";
}

// A program removed by hand, or a repair killed between removing a program
// and its entries, leaves entries naming nothing: `verify` calls them broken
// (nothing Kiln did left them), and `prune` sweeps them like a dead
// writer's files; a lookup of any one of them takes them all.
TEST(ArtifactRepair, EntriesNamingAMissingProgramArePrunedOrTakenByALookup) {
  for (const bool by_prune : {true, false}) {
    SCOPED_TRACE(by_prune ? "prune" : "lookup");
    TempDir dir;
    ArtifactCache writer(no_memory(dir.path()));
    for (int i = 0; i < 3; ++i) ASSERT_TRUE(writer.store(test_key(i), member(i)).ok());
    ASSERT_TRUE(writer.store(test_key(100), test_artifact(2, 5000)).ok());
    std::filesystem::remove(writer.program_path(program_of_group()));

    ArtifactCache cache(no_memory(dir.path()));
    EXPECT_EQ(cache.verify(false).broken.size(), 3u);
    if (by_prune) {
      SweepReport pruned = cache.prune(1ull << 30);
      EXPECT_TRUE(pruned.skipped.empty()) << pruned.skipped;
      EXPECT_EQ(pruned.removed_entries, 3u);
      EXPECT_EQ(pruned.entries, 1u);
    } else {
      EXPECT_EQ(cache.lookup(test_key(1)), nullptr);
      EXPECT_EQ(cache.stats().entries_dropped, 3u);
    }
    SweepReport verified = cache.verify(false);
    EXPECT_TRUE(verified.broken.empty()) << broken_list(verified);
    EXPECT_EQ(verified.entries, 1u);
    EXPECT_NE(cache.lookup(test_key(100)), nullptr);
  }
}

// Read-only, a lookup repairs nothing: it removes neither the damaged
// program nor the entries naming it.
TEST(ArtifactRepair, AReadOnlyCacheRemovesNothing) {
  TempDir dir;
  {
    ArtifactCache writer(no_memory(dir.path()));
    for (int i = 0; i < 3; ++i) ASSERT_TRUE(writer.store(test_key(i), member(i)).ok());
    const auto program = writer.program_path(program_of_group());
    flip(program, std::filesystem::file_size(program) - 10);
  }
  Options o = no_memory(dir.path());
  o.cache_read_only = true;
  ArtifactCache reader(o);
  ASSERT_EQ(reader.state(), CacheState::kReadOnly);
  EXPECT_EQ(reader.lookup(test_key(0)), nullptr);
  EXPECT_EQ(reader.stats().entries_dropped, 0u);
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(std::filesystem::exists(reader.entry_path(test_key(i))));
  EXPECT_TRUE(std::filesystem::exists(reader.program_path(program_of_group())));
}

}  // namespace
}  // namespace kiln
