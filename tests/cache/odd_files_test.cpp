// The caches over odd files (issue 14): FIFOs, device nodes and terabyte
// sparse files in place of artifact entries, tuning files, lock files and
// tables to import. Each library call runs in a forked child under a 60 s
// deadline, so a reader that blocks fails the test instead of hanging it;
// the child prints what it saw as JSON for the parent to check.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>

#include "cache_test_util.hpp"
#include "deadline_run.hpp"
#include "kiln/cache/checked_read.hpp"
#include "kiln/cache/tuning_cache.hpp"
#include "odd_files.hpp"
#include "tuning_file.hpp"

namespace kiln {
namespace {

using testing::options_for;
using testing::TempDir;
using testing::test_artifact;
using testing::test_key;
using testing::test_record;

// Runs `body` in a child with the deadline; returns what it printed, parsed.
nlohmann::json in_child(const std::function<nlohmann::json()>& body) {
  testing::DeadlineRun run = testing::run_in_child_with_deadline([&] {
    std::cout << body().dump() << std::endl;
    return 0;
  });
  EXPECT_FALSE(run.timed_out) << "blocked: killed after the 60 s deadline";
  EXPECT_EQ(run.exit_code, 0) << run.err;
  nlohmann::json seen = nlohmann::json::parse(run.out, nullptr, false);
  EXPECT_FALSE(seen.is_discarded()) << "stdout: " << run.out << "\nstderr: " << run.err;
  return seen;
}

bool contains(const nlohmann::json& text, const std::string& part) {
  return text.is_string() && text.get<std::string>().find(part) != std::string::npos;
}

TEST(OddFiles, ArtifactEntriesThatAreNotRegularFilesAreRefusedNeverRead) {
  TempDir dir;
  ArtifactCache writer(options_for(dir.path()));
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(writer.store(test_key(i), test_artifact(i, 100)).ok());
  ASSERT_TRUE(testing::plant_fifo(writer.entry_path(test_key(0))));  // no writer
  ASSERT_TRUE(testing::plant_fifo(writer.entry_path(test_key(1))));
  testing::FifoWriter holder(writer.entry_path(test_key(1)));  // a writer that never closes
  ASSERT_TRUE(holder.ok());
  ASSERT_TRUE(testing::plant_sparse(writer.entry_path(test_key(2)), testing::kOneTiB));
  const bool device = testing::plant_dev_zero(writer.entry_path(test_key(3)));

  nlohmann::json seen = in_child([&] {
    ArtifactCache cache(options_for(dir.path()));
    nlohmann::json j;
    for (int i = 0; i < 4; ++i) j["hit"].push_back(cache.lookup(test_key(i)) != nullptr);
    j["refused"] = cache.stats().refused_entries;
    j["verify"] = cache.verify(false).to_json();
    return j;
  });
  ASSERT_FALSE(seen.is_discarded());
  EXPECT_EQ(seen["hit"], nlohmann::json({false, false, false, !device}));
  EXPECT_EQ(seen["refused"], device ? 4 : 3);
  ASSERT_EQ(seen["verify"]["broken"].size(), device ? 4u : 3u) << seen.dump(2);
  std::map<std::string, nlohmann::json> problem;  // by path: the listing order is the disk's
  for (const auto& f : seen["verify"]["broken"]) problem[f["path"]] = f["problem"];
  auto problem_of = [&](int i) { return problem[writer.entry_path(test_key(i)).string()]; };
  EXPECT_TRUE(contains(problem_of(0), "it is a FIFO, not a regular file; remove it: rm"))
      << problem_of(0);
  EXPECT_TRUE(contains(problem_of(1), "it is a FIFO")) << problem_of(1);
  EXPECT_TRUE(
      contains(problem_of(2), "it is 1 TiB, larger than the 1 GiB limit for an artifact entry"))
      << problem_of(2);
  if (device) {
    EXPECT_TRUE(contains(problem_of(3), "it is a character device")) << problem_of(3);
  }
  EXPECT_TRUE(testing::is_fifo(writer.entry_path(test_key(0)))) << "a refused entry is left";
}

TEST(OddFiles, StoreNeverReplacesAFifoAtTheEntryPath) {
  TempDir dir;
  ArtifactCache cache(options_for(dir.path()));
  ASSERT_TRUE(cache.store(test_key(0), test_artifact(0, 100)).ok());
  const auto path = cache.entry_path(test_key(0));
  ASSERT_TRUE(testing::plant_fifo(path));
  Result<StoreOutcome> stored = cache.store(test_key(0), test_artifact(0, 100));
  ASSERT_FALSE(stored.ok());
  EXPECT_NE(stored.error().message.find("it is a FIFO, not a regular file"), std::string::npos)
      << stored.error().message;
  EXPECT_TRUE(testing::is_fifo(path));
}

TEST(OddFiles, TuningFileFifoIsAMissAndASaveErrorNotAHang) {
  TempDir dir;
  TuningCache seed(options_for(dir.path()));
  seed.put(test_record("gemm", 1, 1.0));
  ASSERT_TRUE(seed.save().ok());
  const auto file = seed.write_path();
  ASSERT_TRUE(testing::plant_fifo(file));
  testing::FifoWriter holder(file);
  ASSERT_TRUE(holder.ok());
  // A FIFO under another tuning file name with no writer at all.
  ASSERT_TRUE(testing::plant_fifo(dir.path() / "tuning" / "tuning.rank3.json"));

  nlohmann::json seen = in_child([&] {
    TuningCache cache(options_for(dir.path()));
    nlohmann::json j;
    j["records"] = cache.records().size();
    for (const auto& f : cache.files()) j["problems"].push_back(f.problem);
    cache.put(test_record("gemm", 2, 1.0));
    Result<StoreOutcome> saved = cache.save();
    j["saved"] = saved.ok();
    if (!saved.ok()) j["save_error"] = saved.error().message;
    return j;
  });
  ASSERT_FALSE(seen.is_discarded());
  EXPECT_EQ(seen["records"], 0);
  ASSERT_EQ(seen["problems"].size(), 2u) << seen.dump(2);
  EXPECT_TRUE(contains(seen["problems"][0], file.string() + ": it is a FIFO, not a regular file"))
      << seen.dump(2);
  EXPECT_FALSE(seen["saved"].get<bool>());
  EXPECT_TRUE(contains(seen["save_error"], "it is a FIFO")) << seen.dump(2);
  EXPECT_TRUE(testing::is_fifo(file)) << "the save wrote through or replaced the FIFO";
}

TEST(OddFiles, LockFilesThatAreNotRegularFilesAreRefused) {
  TempDir dir;
  TuningCache cache(options_for(dir.path()));
  ASSERT_TRUE(testing::plant_fifo(cache.write_path().string() + ".lock"));
  cache.put(test_record("gemm", 1, 1.0));
  nlohmann::json seen = in_child([&] {
    Result<StoreOutcome> saved = cache.save();
    return nlohmann::json(saved.ok() ? std::string("saved") : saved.error().message);
  });
  EXPECT_TRUE(contains(seen, ".lock: it is a FIFO, not a regular file")) << seen;

  ArtifactCache artifacts(options_for(dir.path()));
  ASSERT_TRUE(artifacts.store(test_key(0), test_artifact(0, 100)).ok());
  ASSERT_TRUE(testing::plant_fifo(artifacts.dir() / ".prune.lock"));
  SweepReport pruned = artifacts.prune(0);
  EXPECT_EQ(pruned.removed_entries, 0u);
  EXPECT_NE(pruned.skipped.find(".prune.lock: it is a FIFO"), std::string::npos) << pruned.skipped;
}

TEST(OddFiles, ImportRefusesDevZeroFifosAndHugeFilesBeforeReading) {
  TempDir dir, elsewhere;
  const auto fifo = elsewhere.path() / "table.fifo";
  const auto held = elsewhere.path() / "held.fifo";
  const auto huge = elsewhere.path() / "huge.json";
  const auto link = elsewhere.path() / "zero-link.json";
  ASSERT_TRUE(testing::plant_fifo(fifo));
  ASSERT_TRUE(testing::plant_fifo(held));
  testing::FifoWriter holder(held);
  ASSERT_TRUE(holder.ok());
  ASSERT_TRUE(testing::plant_sparse(huge, testing::kOneTiB));
  std::filesystem::create_symlink("/dev/zero", link);

  nlohmann::json seen = in_child([&] {
    TuningCache cache(options_for(dir.path()));
    nlohmann::json j;
    for (const std::string& f :
         {std::string("/dev/zero"), fifo.string(), held.string(), huge.string(), link.string()}) {
      Result<std::size_t> n = cache.import_table(f);
      j.push_back(n.ok() ? std::string("imported") : n.error().message);
    }
    return j;
  });
  ASSERT_EQ(seen.size(), 5u) << seen;
  EXPECT_TRUE(contains(seen[0], "/dev/zero: it is a character device, not a regular file")) << seen;
  EXPECT_TRUE(contains(seen[1], "it is a FIFO, not a regular file")) << seen;
  EXPECT_TRUE(contains(seen[2], "it is a FIFO, not a regular file")) << seen;
  EXPECT_TRUE(contains(seen[3], "it is 1 TiB, larger than the 64 MiB limit for a tuning table"))
      << seen;
  EXPECT_TRUE(contains(seen[4], "it is a character device")) << "a link is followed, then judged";
}

TEST(OddFiles, DeeplyNestedTableIsRefusedNotACrash) {
  TempDir dir, elsewhere;
  const auto table = elsewhere.path() / "deep.json";
  {
    std::ofstream out(table);
    out << R"({"format": "kiln-tuning", "format_version": 1, "records": [], "x": )";
    out << std::string(1'000'000, '[') << std::string(1'000'000, ']') << "}";
  }
  nlohmann::json seen = in_child([&] {
    TuningCache cache(options_for(dir.path()));
    Result<std::size_t> n = cache.import_table(table);
    return nlohmann::json(n.ok() ? std::string("imported") : n.error().message);
  });
  EXPECT_TRUE(contains(seen, "nested deeper than 64 levels")) << seen;
}

// Found by the fuzzer: a header field of another type made nlohmann's
// value() throw out of the reader instead of refusing the file.
TEST(OddFiles, AHeaderFieldOfAnotherTypeIsARefusalNotAnException) {
  for (const char* text : {R"({"format": 1, "format_version": 3, "records": []})",
                           R"({"format": ["kiln-tuning"], "format_version": 3, "records": []})",
                           R"(["format", "kiln-tuning"])"}) {
    Result<cache::TuningFile> file = cache::parse_tuning_file(text, "/x/tuning.json");
    ASSERT_FALSE(file.ok()) << text;
    EXPECT_TRUE(contains(file.error().message, "not a Kiln tuning file")) << file.error().message;
  }
  Result<cache::TuningFile> odd_version =
      cache::parse_tuning_file(R"({"format": "kiln-tuning", "format_version": "3"})", "/x/t.json");
  ASSERT_FALSE(odd_version.ok());
  EXPECT_TRUE(contains(odd_version.error().message, "is not a number"))
      << odd_version.error().message;
}

TEST(OddFiles, AWriterNeverProducesAFileNoReaderWouldTake) {
  const std::string big(cache::kMaxTuningFileBytes + 1, ' ');
  Status refused = cache::check_tuning_file_size(big, "/x/tuning.json");
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("larger than the 64 MiB limit for a tuning table"),
            std::string::npos)
      << refused.error().message;
  EXPECT_TRUE(cache::check_tuning_file_size(big.substr(1), "/x/tuning.json").ok());
}

TEST(OddFiles, ExportNeverReplacesAFifoOrADirectory) {
  TempDir dir, elsewhere;
  TuningCache cache(options_for(dir.path()));
  cache.put(test_record("gemm", 1, 1.0));
  ASSERT_TRUE(cache.save().ok());
  const auto fifo = elsewhere.path() / "out.json";
  ASSERT_TRUE(testing::plant_fifo(fifo));
  Result<std::size_t> exported = cache.export_table(fifo);
  ASSERT_FALSE(exported.ok());
  EXPECT_NE(exported.error().message.find("it is a FIFO, not a regular file"), std::string::npos)
      << exported.error().message;
  EXPECT_TRUE(testing::is_fifo(fifo));
  EXPECT_FALSE(cache.export_table(elsewhere.path()).ok());
}

}  // namespace
}  // namespace kiln
