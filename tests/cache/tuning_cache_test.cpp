// The tuning cache on a real directory: save and reload, misses on another
// device, toolchain or environment, per-rank files, read-only mode, shipped
// tables, damaged and edited files and records, records of another kernel
// definition, and the golden files that pin format version 2 and show that
// a version 1 file is never served.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <tuple>

#include "cache_test_util.hpp"
#include "kiln/cache/file_io.hpp"
#include "kiln/cache/tuning_cache.hpp"
#include "tuning_file.hpp"

namespace kiln {
namespace {

using testing::options_for;
using testing::TempDir;
using testing::test_identity;
using testing::test_record;

ProblemKey problem(const std::string& kernel, std::int64_t m) {
  return ProblemKey(kernel).scalar("M", m);
}

TEST(TuningCache, SaveReloadLookup) {
  TempDir dir;
  {
    TuningCache cache(options_for(dir.path()));
    cache.put(test_record("gemm", 128, 0.5));
    EXPECT_TRUE(cache.lookup(problem("gemm", 128), test_identity()).has_value())
        << "put serves at once";
    ASSERT_EQ(cache.save().value(), StoreOutcome::kWritten);
    EXPECT_EQ(cache.pending(), 0u);
  }
  TuningCache again(options_for(dir.path()));
  auto hit = again.lookup(problem("gemm", 128), test_identity());
  ASSERT_TRUE(hit.has_value());
  EXPECT_EQ(hit->best, test_record("gemm", 128, 0.5).best);
  EXPECT_DOUBLE_EQ(hit->best_time_ms, 0.5);
  ASSERT_EQ(hit->measured.size(), 2u);
  EXPECT_EQ(hit->measured[1].reason, "too much shared memory");
  EXPECT_FALSE(again.lookup(problem("gemm", 256), test_identity()).has_value());
  EXPECT_EQ(again.write_path(), dir.path() / "tuning" / "tuning.json");
}

// Two tuners of one problem keep the faster record; a retune's record
// replaces the held one even when slower, in memory, in the file and for a
// process that reads the directory afterwards.
TEST(TuningCache, ReplacingPutWinsOverAFasterRecord) {
  TempDir dir;
  {
    TuningCache cache(options_for(dir.path()));
    cache.put(test_record("gemm", 128, 0.5));
    ASSERT_TRUE(cache.save().ok());
    cache.put(test_record("gemm", 128, 0.9));
    EXPECT_DOUBLE_EQ(cache.lookup(problem("gemm", 128), test_identity())->best_time_ms, 0.5)
        << "a slower record does not replace a faster one by default";
    cache.put(test_record("gemm", 128, 0.9), TuningCache::PutMode::kReplace);
    EXPECT_DOUBLE_EQ(cache.lookup(problem("gemm", 128), test_identity())->best_time_ms, 0.9);
    ASSERT_TRUE(cache.save().ok());
    EXPECT_DOUBLE_EQ(cache.lookup(problem("gemm", 128), test_identity())->best_time_ms, 0.9)
        << "saving does not bring the faster record back";
    cache.reload();
    EXPECT_DOUBLE_EQ(cache.lookup(problem("gemm", 128), test_identity())->best_time_ms, 0.9);
  }
  TuningCache reader(options_for(dir.path()));
  ASSERT_EQ(reader.records().size(), 1u);
  EXPECT_DOUBLE_EQ(reader.lookup(problem("gemm", 128), test_identity())->best_time_ms, 0.9);
  // After the save, puts keep the faster record again.
  reader.put(test_record("gemm", 128, 0.7));
  ASSERT_TRUE(reader.save().ok());
  EXPECT_DOUBLE_EQ(TuningCache(options_for(dir.path()))
                       .lookup(problem("gemm", 128), test_identity())
                       ->best_time_ms,
                   0.7);
}

TEST(TuningCache, AnotherDeviceToolchainOrEnvironmentIsAMiss) {
  TempDir dir;
  TuningCache cache(options_for(dir.path()));
  cache.put(test_record("gemm", 128, 0.5));
  ASSERT_TRUE(cache.save().ok());
  TuningCache reader(options_for(dir.path()));

  TuningIdentity other_device = test_identity();
  other_device.device = {"sm_80", "NVIDIA A100", 8, 0};
  TuningIdentity same_arch_other_part = test_identity();
  same_arch_other_part.device.name = "Other GPU";
  TuningIdentity other_nvrtc = test_identity();
  other_nvrtc.toolchain.compiler = "nvrtc 13.1";
  TuningIdentity other_codegen = test_identity();
  other_codegen.toolchain.codegen_hash = "changed";
  TuningIdentity other_env = test_identity();
  other_env.env.values[0].second = "sm_100a";
  for (const auto* id :
       {&other_device, &same_arch_other_part, &other_nvrtc, &other_codegen, &other_env}) {
    EXPECT_FALSE(reader.lookup(problem("gemm", 128), *id).has_value());
  }
  EXPECT_TRUE(reader.lookup(problem("gemm", 128), test_identity()).has_value());

  TuningRecord stored = test_record("gemm", 128, 0.5);
  auto why = [&](const TuningIdentity& id) {
    Status served = check_identity(stored, id);
    return served.ok() ? std::string() : served.error().message;
  };
  EXPECT_NE(why(other_nvrtc).find("compiler nvrtc 13.0, now nvrtc 13.1"), std::string::npos);
  EXPECT_NE(why(other_env).find("KILN_ARCH was unset, now 'sm_100a'"), std::string::npos)
      << why(other_env);
  EXPECT_TRUE(check_identity(stored, test_identity()).ok());
}

TEST(TuningCache, RanksWriteTheirOwnFilesAndReadEveryones) {
  TempDir dir;
  for (int rank = 0; rank < 3; ++rank) {
    Options o = options_for(dir.path());
    o.rank = rank;
    TuningCache cache(o);
    EXPECT_EQ(cache.write_path().filename(), "tuning.rank" + std::to_string(rank) + ".json");
    cache.put(test_record("gemm", rank, 1.0));
    ASSERT_TRUE(cache.save().ok());
  }
  TuningCache all(options_for(dir.path()));
  EXPECT_EQ(all.records().size(), 3u);
  EXPECT_EQ(all.files().size(), 3u);
  for (int rank = 0; rank < 3; ++rank) {
    EXPECT_TRUE(all.lookup(problem("gemm", rank), test_identity()).has_value());
  }
}

TEST(TuningCache, MergeKeepsTheFasterRecord) {
  TempDir dir;
  TuningCache a(options_for(dir.path()));
  TuningCache b(options_for(dir.path()));
  a.put(test_record("gemm", 1, 2.0));
  b.put(test_record("gemm", 1, 1.0));
  b.put(test_record("gemm", 2, 1.0));
  ASSERT_TRUE(b.save().ok());
  ASSERT_TRUE(a.save().ok());  // merges with b's file, which it never read
  TuningCache c(options_for(dir.path()));
  EXPECT_EQ(c.records().size(), 2u);
  EXPECT_DOUBLE_EQ(c.lookup(problem("gemm", 1), test_identity())->best_time_ms, 1.0);
}

TEST(TuningCache, ReadOnlyServesButNeverWrites) {
  TempDir dir;
  {
    TuningCache cache(options_for(dir.path()));
    cache.put(test_record("gemm", 1, 1.0));
    ASSERT_TRUE(cache.save().ok());
  }
  const auto file = dir.path() / "tuning" / "tuning.json";
  const std::string before = testing::read_test_file(file).value();
  Options o = options_for(dir.path());
  o.cache_read_only = true;
  TuningCache cache(o);
  EXPECT_TRUE(cache.lookup(problem("gemm", 1), test_identity()).has_value());
  cache.put(test_record("gemm", 2, 1.0));
  EXPECT_EQ(cache.save().value(), StoreOutcome::kSkippedReadOnly);
  EXPECT_EQ(testing::read_test_file(file).value(), before);
  EXPECT_FALSE(cache.clear().ok());
}

TEST(TuningCache, ExportImportRoundTripAndShippedTable) {
  TempDir source_dir, target_dir, ship_dir;
  TuningCache source(options_for(source_dir.path()));
  for (int m = 0; m < 5; ++m) source.put(test_record("gemm", m, 1.0 + m));
  ASSERT_TRUE(source.save().ok());
  const auto table = ship_dir.path() / "app_tuning.json";
  ASSERT_EQ(source.export_table(table).value(), 5u);

  TuningCache target(options_for(target_dir.path()));
  ASSERT_EQ(target.import_table(table).value(), 5u);
  TuningCache reread(options_for(target_dir.path()));
  std::vector<TuningRecord> a = source.records(), b = reread.records();
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].to_json(), b[i].to_json());

  // Shipped with an application: looked up with no cache directory at all.
  TuningCache shipped = TuningCache::open_file(table, /*read_only=*/true);
  EXPECT_TRUE(shipped.lookup(problem("gemm", 3), test_identity()).has_value());
  EXPECT_EQ(shipped.save().value(), StoreOutcome::kSkippedReadOnly);
  // Or as one more source in front of the user's cache.
  TempDir empty;
  TuningCache user(options_for(empty.path()));
  ASSERT_EQ(user.add_table(table).value(), 5u);
  EXPECT_TRUE(user.lookup(problem("gemm", 4), test_identity()).has_value());
}

// An export is the user's file, not the cache's: made as any program makes
// one (0666 less the umask), or keeping the mode of the file it replaces;
// it came out 0600, unreadable to a colleague it was shared with. The
// cache's own file stays 0600. Group and others never get write, since a
// table they can write is refused: with umask 002 the export is 0644 and
// reads back as a shipped table.
TEST(TuningCache, AnExportIsTheUsersFileWithTheUsersMode) {
  struct UmaskGuard {
    mode_t old = ::umask(022);
    ~UmaskGuard() { ::umask(old); }
  } guard;
  TempDir dir, out;
  TuningCache cache(options_for(dir.path()));
  cache.put(test_record("gemm", 1, 1.0));
  ASSERT_TRUE(cache.save().ok());
  auto mode = [](const std::filesystem::path& p) {
    struct stat st {};
    EXPECT_EQ(::stat(p.c_str(), &st), 0) << p;
    return st.st_mode & 07777;
  };
  EXPECT_EQ(mode(cache.write_path()), 0600u);
  const auto table = out.path() / "table.json";
  ASSERT_TRUE(cache.export_table(table).ok());
  EXPECT_EQ(mode(table), 0644u);
  ASSERT_EQ(::chmod(table.c_str(), 0640), 0);
  ASSERT_TRUE(cache.export_table(table).ok());
  EXPECT_EQ(mode(table), 0640u) << "the replaced file's mode is kept";
  ASSERT_EQ(::chmod(table.c_str(), 0666), 0);
  ASSERT_TRUE(cache.export_table(table).ok());
  EXPECT_EQ(mode(table), 0644u) << "but not others' write";
  EXPECT_EQ(mode(cache.write_path()), 0600u);

  ::umask(002);
  const auto shared = out.path() / "shared.json";
  ASSERT_TRUE(cache.export_table(shared).ok());
  EXPECT_EQ(mode(shared), 0644u);
  TuningCache shipped = TuningCache::open_file(shared, /*read_only=*/true);
  EXPECT_TRUE(shipped.lookup(problem("gemm", 1), test_identity()).has_value());
  TempDir target_dir;
  TuningCache target(options_for(target_dir.path()));
  EXPECT_EQ(target.import_table(shared).value(), 1u);
}

// Saves records for M=1 and M=2 into `dir`; returns the file written.
std::filesystem::path save_two_records(const TempDir& dir) {
  TuningCache cache(options_for(dir.path()));
  cache.put(test_record("gemm", 1, 1.0));
  cache.put(test_record("gemm", 2, 1.0));
  EXPECT_TRUE(cache.save().ok());
  return cache.write_path();
}

TEST(TuningCache, DamagedFilesAndRecordsAreNeverServed) {
  TempDir dir;
  const auto file = save_two_records(dir);
  std::string text = testing::read_test_file(file).value();

  // A truncated file: nothing served, the problem reported, and the next
  // save replaces it with a good one.
  std::ofstream(file, std::ios::trunc) << text.substr(0, text.size() / 2);
  TuningCache truncated(options_for(dir.path()));
  EXPECT_TRUE(truncated.records().empty());
  ASSERT_EQ(truncated.files().size(), 1u);
  EXPECT_NE(truncated.files()[0].problem.find("not valid JSON"), std::string::npos);
  truncated.put(test_record("gemm", 3, 1.0));
  ASSERT_TRUE(truncated.save().ok());
  EXPECT_EQ(TuningCache(options_for(dir.path())).records().size(), 1u);

  // A record whose device was edited (its id kept) is skipped alone: it
  // would otherwise be served on a device it was never tuned on.
  nlohmann::json j = nlohmann::json::parse(text);
  j["records"][0]["device"]["arch"] = "sm_80";
  std::ofstream(file, std::ios::trunc) << j.dump();
  TuningCache edited(options_for(dir.path()));
  EXPECT_EQ(edited.records().size(), 1u);
  ASSERT_EQ(edited.files()[0].skipped.size(), 1u);
  EXPECT_NE(edited.files()[0].skipped[0].find("does not match its content"), std::string::npos);

  // Another format version: not read at all.
  j = nlohmann::json::parse(text);
  j["format_version"] = kTuningFormatVersion + 1;
  std::ofstream(file, std::ios::trunc) << j.dump();
  TuningCache future(options_for(dir.path()));
  EXPECT_TRUE(future.records().empty());
  EXPECT_NE(future.files()[0].problem.find("newer format (format version " +
                                           std::to_string(kTuningFormatVersion + 1)),
            std::string::npos)
      << future.files()[0].problem;
}

// A record holds the definition hash of the kernel it was tuned for: a
// lookup for an edited kernel, or another kernel of the same name and
// arguments, is a miss that says why, and the two kernels' records live
// side by side (going back to the old kernel finds its record again).
TEST(TuningCache, ARecordIsServedOnlyToTheKernelItWasTunedFor) {
  TempDir dir;
  TuningIdentity edited = test_identity();
  edited.definition = hash128("the same kernel, edited");
  {
    TuningCache cache(options_for(dir.path()));
    cache.put(test_record("gemm", 128, 0.5));
    ASSERT_TRUE(cache.save().ok());
  }
  TuningCache reader(options_for(dir.path()));
  EXPECT_FALSE(reader.lookup(problem("gemm", 128), edited).has_value());
  Status served = check_identity(test_record("gemm", 128, 0.5), edited);
  ASSERT_FALSE(served.ok());
  EXPECT_NE(served.error().message.find("the kernel changed since it was tuned"),
            std::string::npos);

  // The edited kernel's record, slower, does not displace the first one.
  reader.put(test_record("gemm", 128, 0.9, edited));
  ASSERT_TRUE(reader.save().ok());
  TuningCache both(options_for(dir.path()));
  EXPECT_EQ(both.records().size(), 2u);
  ASSERT_TRUE(both.lookup(problem("gemm", 128), edited).has_value());
  EXPECT_DOUBLE_EQ(both.lookup(problem("gemm", 128), edited)->best_time_ms, 0.9);
  ASSERT_TRUE(both.lookup(problem("gemm", 128), test_identity()).has_value());
  EXPECT_DOUBLE_EQ(both.lookup(problem("gemm", 128), test_identity())->best_time_ms, 0.5);
  EXPECT_EQ(both.lookup(problem("gemm", 128), edited)->definition, edited.definition);
}

// Writes `edited` (two records, one of them edited) to `file`: a reader
// serves the other record and lists the edited one as skipped, naming
// `named` in why.
void expect_only_the_other_record_read(const TempDir& dir, const std::filesystem::path& file,
                                       const nlohmann::json& edited, const std::string& what,
                                       const std::string& named) {
  std::ofstream(file, std::ios::trunc) << edited.dump(1);
  TuningCache reader(options_for(dir.path()));
  EXPECT_EQ(reader.records().size(), 1u) << what << ": only the untouched record is read";
  const std::vector<TuningFileStatus> files = reader.files();
  ASSERT_EQ(files.size(), 1u);
  ASSERT_EQ(files[0].skipped.size(), 1u) << what;
  EXPECT_NE(files[0].skipped[0].find(named), std::string::npos)
      << what << ": " << files[0].skipped[0];
}

// The checksum covers the served config and its evidence: a record whose
// best config, time or measured list was edited by hand is refused like a
// damaged one (skipped and listed, so `kiln cache verify` counts it), and
// its neighbours are still served.
TEST(TuningCache, AnEditedResultIsRefusedLikeDamage) {
  TempDir dir;
  const auto file = save_two_records(dir);
  const nlohmann::json saved = nlohmann::json::parse(testing::read_test_file(file).value());
  ASSERT_EQ(saved["records"].size(), 2u);
  const std::vector<std::pair<std::string, std::function<void(nlohmann::json&)>>> edits = {
      {"best config", [](nlohmann::json& r) { r["best"]["config"]["BM"] = 128; }},
      {"best time", [](nlohmann::json& r) { r["best"]["time_ms"] = 0.001; }},
      {"a measured time", [](nlohmann::json& r) { r["measured"][0]["time_ms"] = 0.001; }},
      {"a failed config marked ok", [](nlohmann::json& r) { r["measured"][1]["ok"] = true; }},
      {"a measurement removed", [](nlohmann::json& r) { r["measured"].erase(1); }},
      {"created", [](nlohmann::json& r) { r["created"] = "2030-01-01T00:00:00Z"; }},
      {"checksum removed", [](nlohmann::json& r) { r.erase("checksum"); }},
  };
  for (const auto& [what, edit] : edits) {
    nlohmann::json j = saved;
    edit(j["records"][0]);
    expect_only_the_other_record_read(dir, file, j, what, "checksum");
  }
  // Re-indenting the file is not an edit of any record.
  std::ofstream(file, std::ios::trunc) << saved.dump(4);
  EXPECT_EQ(TuningCache(options_for(dir.path())).records().size(), 2u);
}

// What each measured config cost (compile_ms, benchmark_ms) is kept and
// read back, yet stays outside "checksum": an older Kiln, whose reader
// knows neither field, recomputes the same checksum and keeps serving the
// record. Its own costs_checksum still refuses edited or damaged costs.
TEST(TuningCache, CostsRoundTripOutsideTheChecksumAndAreCheckedApart) {
  TempDir dir;
  TuningRecord plain = test_record("gemm", 1, 1.0);
  TuningRecord costed = plain;
  costed.measured[0].compile_ms = 812.5;
  costed.measured[0].benchmark_ms = 31.25;
  costed.measured[1].compile_ms = 90.0;  // rejected by the device: compiled, never benchmarked
  EXPECT_EQ(costed.to_json()["checksum"], plain.to_json()["checksum"]);
  EXPECT_FALSE(plain.to_json().contains("costs_checksum"));
  {
    TuningCache cache(options_for(dir.path()));
    cache.put(costed);
    cache.put(test_record("gemm", 2, 1.0));
    ASSERT_TRUE(cache.save().ok());
  }
  auto hit = TuningCache(options_for(dir.path())).lookup(plain.problem, test_identity());
  ASSERT_TRUE(hit.has_value());
  EXPECT_EQ(hit->measured[0].compile_ms, 812.5);
  EXPECT_EQ(hit->measured[0].benchmark_ms, 31.25);
  EXPECT_EQ(hit->measured[1].compile_ms, 90.0);
  EXPECT_FALSE(hit->measured[1].benchmark_ms.has_value());

  const auto file = TuningCache(options_for(dir.path())).write_path();
  const nlohmann::json saved = nlohmann::json::parse(testing::read_test_file(file).value());
  std::size_t at = saved["records"][0].contains("costs_checksum") ? 0 : 1;
  ASSERT_TRUE(saved["records"][at].contains("costs_checksum"));
  // The record as an older Kiln sees it (and writes it back): no costs, the
  // same checksum, served.
  nlohmann::json older = saved;
  older["records"][at].erase("costs_checksum");
  for (auto& m : older["records"][at]["measured"]) {
    m.erase("compile_ms");
    m.erase("benchmark_ms");
  }
  std::ofstream(file, std::ios::trunc) << older.dump(1);
  {
    TuningCache reader(options_for(dir.path()));
    EXPECT_EQ(reader.records().size(), 2u);
    auto read = reader.lookup(plain.problem, test_identity());
    ASSERT_TRUE(read.has_value());
    EXPECT_FALSE(read->measured[0].compile_ms.has_value());
  }
  const std::vector<std::tuple<std::string, std::function<void(nlohmann::json&)>, std::string>>
      edits = {
          {"a compile cost", [](nlohmann::json& r) { r["measured"][0]["compile_ms"] = 1.0; },
           "costs_checksum"},
          {"a benchmark cost added",
           [](nlohmann::json& r) { r["measured"][1]["benchmark_ms"] = 5.0; }, "costs_checksum"},
          {"costs_checksum removed", [](nlohmann::json& r) { r.erase("costs_checksum"); },
           "costs_checksum"},
          {"a negative cost", [](nlohmann::json& r) { r["measured"][0]["benchmark_ms"] = -3; },
           "'benchmark_ms' is -3, not a cost in milliseconds"},
          {"a cost as text", [](nlohmann::json& r) { r["measured"][0]["compile_ms"] = "fast"; },
           "'compile_ms' is not a number"},
      };
  for (const auto& [what, edit, named] : edits) {
    nlohmann::json j = saved;
    edit(j["records"][at]);
    expect_only_the_other_record_read(dir, file, j, what, named);
  }
}

// Loads a private copy of golden file `name` at `file` (the cache refuses a
// file that group or others can write, as a checkout may leave the source).
Result<cache::TuningFile> load_golden_copy(const char* name, const std::filesystem::path& file) {
  std::filesystem::copy_file(std::filesystem::path(KILN_CACHE_GOLDEN_DIR) / name, file);
  std::filesystem::permissions(
      file, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  return cache::load_tuning_file(file);
}

// A file of the previous format (records without a definition hash or a
// checksum) is never served and never fatal: the reader says it is of an
// older format, and the next save replaces it with a current one.
TEST(TuningCache, AnOlderFormatFileIsNotServedAndIsReplaced) {
  TempDir dir;
  std::filesystem::create_directories(dir.path() / "tuning");
  const auto file = dir.path() / "tuning" / "tuning.json";
  Result<cache::TuningFile> old = load_golden_copy("tuning_v1.json", file);
  ASSERT_FALSE(old.ok());
  EXPECT_EQ(old.error().code, ErrorCode::kCorrupt);
  EXPECT_NE(old.error().message.find("older format (format version 1"), std::string::npos)
      << old.error().message;

  TuningCache cache(options_for(dir.path()));
  EXPECT_TRUE(cache.records().empty());
  TuningIdentity v1_identity = test_identity();
  v1_identity.definition = Hash128{};  // what a version 1 record would have meant
  EXPECT_FALSE(cache.lookup(problem("gemm", 4096), test_identity()).has_value());
  EXPECT_FALSE(cache.lookup(problem("gemm", 4096), v1_identity).has_value());
  ASSERT_EQ(cache.files().size(), 1u);
  EXPECT_NE(cache.files()[0].problem.find("older format"), std::string::npos);

  const std::string v1_bytes = testing::read_test_file(file).value();
  cache.put(test_record("gemm", 4096, 0.2));
  ASSERT_TRUE(cache.save().ok());
  Result<cache::TuningFile> replaced = cache::load_tuning_file(file);
  ASSERT_TRUE(replaced.ok()) << replaced.error().describe();
  EXPECT_EQ(replaced->header["format_version"], kTuningFormatVersion);
  ASSERT_EQ(replaced->records.size(), 1u);
  EXPECT_DOUBLE_EQ(replaced->records.begin()->second.best_time_ms, 0.2);
  // The old file is kept beside it, byte for byte, under a name no reader
  // takes for a tuning file.
  std::vector<std::filesystem::path> aside;
  for (const auto& e : std::filesystem::directory_iterator(dir.path() / "tuning"))
    if (e.path().filename().string().starts_with("tuning.json.unreadable-"))
      aside.push_back(e.path());
  ASSERT_EQ(aside.size(), 1u);
  EXPECT_EQ(testing::read_test_file(aside[0]).value(), v1_bytes);
  EXPECT_EQ(TuningCache(options_for(dir.path())).files().size(), 1u);
}

// A file of a newer format holds a newer Kiln's records, which this one
// cannot read but that one serves: a save refuses to replace it (the run
// goes on untouched, its result not saved) and says what to do.
TEST(TuningCache, ANewerFormatFileIsNeverReplaced) {
  TempDir dir;
  {
    TuningCache cache(options_for(dir.path()));
    cache.put(test_record("gemm", 1, 1.0));
    ASSERT_TRUE(cache.save().ok());
  }
  const auto file = dir.path() / "tuning" / "tuning.json";
  nlohmann::json j = nlohmann::json::parse(testing::read_test_file(file).value());
  j["format_version"] = kTuningFormatVersion + 1;
  std::ofstream(file, std::ios::trunc) << j.dump();
  const std::string newer = testing::read_test_file(file).value();

  TuningCache cache(options_for(dir.path()));
  cache.put(test_record("gemm", 2, 1.0));
  Result<StoreOutcome> saved = cache.save();
  ASSERT_FALSE(saved.ok());
  EXPECT_EQ(saved.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(saved.error().message.find("newer format"), std::string::npos) << saved.error().message;
  EXPECT_NE(saved.error().message.find("KILN_CACHE_DIR"), std::string::npos)
      << saved.error().message;
  EXPECT_EQ(testing::read_test_file(file).value(), newer);
  // Still served from memory in this process.
  EXPECT_TRUE(cache.lookup(problem("gemm", 2), test_identity()).has_value());
}

// Version 2 keyed every record by every backend's compiler (NVRTC and LLVM
// versions in one fingerprint): its records are not served either, and the
// reader says why.
TEST(TuningCache, AVersion2FileIsNotServed) {
  TempDir dir;
  Result<cache::TuningFile> old = load_golden_copy("tuning_v2.json", dir.path() / "v2.json");
  ASSERT_FALSE(old.ok());
  EXPECT_EQ(old.error().code, ErrorCode::kCorrupt);
  EXPECT_NE(old.error().message.find("older format (format version 2"), std::string::npos)
      << old.error().message;
  EXPECT_NE(old.error().message.find("every backend's compiler"), std::string::npos)
      << old.error().message;
}

// If this fails, the tuning JSON changed: bump kTuningFormatVersion and add
// a new golden file (kiln_cache_worker write-golden DIR).
TEST(TuningCache, GoldenFilePinsVersion3) {
  ASSERT_EQ(kTuningFormatVersion, 3);
  // A private copy: the cache refuses a file that group or others can write,
  // and a checkout made with umask 002 leaves the source tree's copy so.
  TempDir dir;
  const auto path = dir.path() / "tuning_v3.json";
  std::filesystem::copy_file(std::filesystem::path(KILN_CACHE_GOLDEN_DIR) / "tuning_v3.json", path);
  std::filesystem::permissions(
      path, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write |
                std::filesystem::perms::group_read | std::filesystem::perms::others_read);
  Result<cache::TuningFile> golden = cache::load_tuning_file(path);
  ASSERT_TRUE(golden.ok()) << golden.error().describe();
  ASSERT_EQ(golden->records.size(), 1u);
  EXPECT_TRUE(golden->problems.empty());
  const TuningRecord expected = test_record("gemm", 4096, 0.125);
  EXPECT_EQ(golden->records.begin()->second.to_json(), expected.to_json())
      << "the tuning record JSON changed without a format version bump";
  nlohmann::json raw = nlohmann::json::parse(testing::read_test_file(path).value());
  EXPECT_EQ(raw["format"], "kiln-tuning");
  EXPECT_EQ(raw["format_version"], 3);
  EXPECT_EQ(raw["records"][0]["toolchain"]["backend"], "cuda");
  EXPECT_EQ(raw["records"][0]["toolchain"]["compiler"], "nvrtc 13.0");
  EXPECT_EQ(raw["records"][0]["definition"], testing::test_identity().definition.hex());
  EXPECT_TRUE(raw["records"][0]["checksum"].is_string());
  for (const char* field :
       {"kiln_version", "device_name", "compute_capability", "created", "updated"}) {
    EXPECT_TRUE(raw.contains(field)) << field;
  }
  TuningCache shipped = TuningCache::open_file(path, true);
  EXPECT_TRUE(shipped.lookup(problem("gemm", 4096), testing::test_identity()).has_value());
}

}  // namespace
}  // namespace kiln

namespace kiln {
namespace {

// save() writes or says (through writable()) why it did not: what the CLI
// needs to print "saved" only when a save happened.
TEST(TuningCache, WritableSaysWhySaveWritesNothing) {
  TempDir dir;
  TuningCache ready(testing::options_for(dir.path()));
  std::string why = "untouched";
  EXPECT_TRUE(ready.writable(&why));
  EXPECT_EQ(why, "untouched");

  Options ro = testing::options_for(dir.path());
  ro.cache_read_only = true;
  TuningCache read_only(ro);
  read_only.put(testing::test_record("gemm", 1, 1.0));
  EXPECT_EQ(read_only.save().value(), StoreOutcome::kSkippedReadOnly);
  EXPECT_FALSE(read_only.writable(&why));
  EXPECT_EQ(why, "the cache is read-only (KILN_CACHE_READ_ONLY is set)");

  Options off = testing::options_for(dir.path());
  off.cache_disabled = true;
  TuningCache disabled(off);
  EXPECT_EQ(disabled.save().value(), StoreOutcome::kSkippedDisabled);
  EXPECT_FALSE(disabled.writable(&why));
  EXPECT_EQ(why, "caching is disabled (KILN_CACHE_DISABLE is set)");

  TempDir open_dir;
  ASSERT_EQ(::chmod(open_dir.path().c_str(), 0777), 0);
  TuningCache refused(testing::options_for(open_dir.path()));
  EXPECT_EQ(refused.save().value(), StoreOutcome::kSkippedDisabled);
  EXPECT_FALSE(refused.writable(&why));
  EXPECT_NE(why.find("the cache directory is refused: refusing cache path " +
                     open_dir.path().string() + ": group or others can write it"),
            std::string::npos)
      << why;

  TuningCache shipped = TuningCache::open_file(dir.path() / "t.json", /*read_only=*/true);
  EXPECT_FALSE(shipped.writable(&why));
  EXPECT_NE(why.find("was opened read-only"), std::string::npos) << why;
}

}  // namespace
}  // namespace kiln
