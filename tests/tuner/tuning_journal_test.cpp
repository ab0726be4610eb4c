// The tuning journal (issue 57 §4): lines a killed writer tore, garbage
// and lines of another key are skipped; two processes appending to one
// journal lose nothing; a tuner keeps only final results (a crash may be
// the interruption's doing, an output waits for its verdict) and takes
// each earlier measurement once. Real files in a temporary directory.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "kiln/cache/tuning_journal.hpp"
#include "run_journal.hpp"

namespace kiln::internal {
namespace {

namespace fs = std::filesystem;

FailureKey key(std::int64_t n = 256, const std::string& def = "def") {
  ProblemKey p("scale");
  p.scalar("n", Value{n});
  return FailureKey{p, TuningIdentity{hash128(def), DeviceIdentity{"host", "cpu", 0, 0}, {}, {}},
                    1};
}

Measurement timed(std::int64_t v, double seconds) {
  Measurement m;
  m.config = Config{{"V", v}};
  m.stats = TimingStats::from_samples({seconds, seconds});
  return m;
}

Measurement failed(std::int64_t v, Outcome outcome) {
  Measurement m;
  m.config = Config{{"V", v}};
  m.outcome = outcome;
  m.error = make_error(outcome_error_code(outcome), "it broke", {{"log", "error: V"}});
  return m;
}

std::size_t lines(const fs::path& file) {
  std::ifstream in(file);
  std::size_t n = 0;
  for (std::string line; std::getline(in, line);) n += !line.empty();
  return n;
}

class Journal : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("kiln_journal_" + std::to_string(getpid()));
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  TuningJournal journal() const { return TuningJournal(dir_ / "journal"); }
  fs::path dir_;
};

TEST_F(Journal, KeepsEachEntryAndTheLastOfAConfig) {
  const TuningJournal j = journal();
  ASSERT_TRUE(j.read(key()).empty()) << "no journal yet";
  ASSERT_TRUE(j.append(key(), timed(1, 0.002).to_json()).ok());
  ASSERT_TRUE(j.append(key(), timed(2, 0.003).to_json()).ok());
  ASSERT_TRUE(j.append(key(), timed(1, 0.001).to_json()).ok());
  const auto got = j.read(key());
  ASSERT_EQ(got.size(), 2u);
  EXPECT_DOUBLE_EQ(Measurement::from_json(got[0]).stats.median, 0.001) << "the last line wins";
  EXPECT_EQ(Measurement::from_json(got[1]).config.get_int("V"), 2);
  EXPECT_TRUE(j.read(key(512)).empty()) << "another problem's journal";
  EXPECT_TRUE(j.read(key(256, "edited")).empty()) << "another definition's journal";
  ASSERT_TRUE(j.remove(key()).ok());
  EXPECT_FALSE(fs::exists(j.file_for(key())));
  EXPECT_TRUE(TuningJournal(dir_ / "journal", /*read_only=*/true).append(key(), {}).ok());
  EXPECT_FALSE(fs::exists(j.file_for(key()))) << "a read-only journal writes nothing";
}

TEST_F(Journal, TornGarbageAndForeignLinesAreSkipped) {
  const TuningJournal j = journal();
  ASSERT_TRUE(j.append(key(), timed(1, 0.002).to_json()).ok());
  const fs::path file = j.file_for(key());
  const std::string good = [&] {
    std::ifstream in(file);
    std::string line;
    std::getline(in, line);
    return line;
  }();
  {
    std::ofstream out(file, std::ios::app);
    out << "not json at all\n[1,2]\n";
    // A line of another key, moved here: never read as this key's.
    nlohmann::json foreign = nlohmann::json::parse(good);
    foreign["key"] = key(512).id().hex();
    foreign["entry"] = timed(9, 0.001).to_json();
    out << foreign.dump() << "\n";
    out << good.substr(0, good.size() / 2);  // a writer killed mid-line
  }
  // The next writer starts a line of its own after the torn one.
  ASSERT_TRUE(j.append(key(), timed(2, 0.003).to_json()).ok());
  const auto got = j.read(key());
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(Measurement::from_json(got[0]).config.get_int("V"), 1);
  EXPECT_EQ(Measurement::from_json(got[1]).config.get_int("V"), 2);
}

TEST_F(Journal, TwoProcessesAppendingLoseNothing) {
  const TuningJournal j = journal();
  constexpr int kEach = 200;
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  const int base = child == 0 ? 1000 : 0;
  bool all = true;
  for (int i = 0; i < kEach; ++i)
    all = all && j.append(key(), timed(base + i, 0.001).to_json()).ok();
  if (child == 0) ::_exit(all ? 0 : 1);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_TRUE(all);
  EXPECT_EQ(lines(j.file_for(key())), 2u * kEach);
  EXPECT_EQ(j.read(key()).size(), 2u * kEach) << "every line whole";
}

TEST_F(Journal, ATunerKeepsFinalResultsAndTakesEachEarlierOneOnce) {
  RunJournal run(journal(), key(), /*write=*/true, std::nullopt);
  run.landed(timed(1, 0.002), nullptr);
  run.landed(failed(2, Outcome::kCompileFailed), nullptr);
  run.landed(failed(3, Outcome::kCrashed), nullptr);    // maybe the interruption's doing
  run.landed(failed(4, Outcome::kCancelled), nullptr);  // never ran
  run.close({}, /*finished=*/false);
  EXPECT_EQ(lines(journal().file_for(key())), 2u);

  // The next run of the key: the default is the outputs' reference, measured again.
  RunJournal next(journal(), key(), true, Config{{"V", 1}});
  EXPECT_FALSE(next.take(Config{{"V", 1}})) << "the reference is measured again";
  auto broken = next.take(Config{{"V", 2}});
  ASSERT_TRUE(broken);
  EXPECT_EQ(broken->outcome, Outcome::kCompileFailed);
  EXPECT_EQ(broken->error.details.at("log"), "error: V") << "the whole error is kept";
  EXPECT_FALSE(next.take(Config{{"V", 2}})) << "taken once: a second measurement is anew";
  EXPECT_FALSE(next.take(Config{{"V", 3}}));
  EXPECT_EQ(next.resumed().size(), 1u);
  next.landed(*broken, nullptr);
  EXPECT_EQ(lines(journal().file_for(key())), 2u) << "a resumed result is not written again";
  next.close({}, /*finished=*/true);
  EXPECT_FALSE(fs::exists(journal().file_for(key()))) << "a finished run removes its journal";
}

TEST_F(Journal, AnOutputWaitsForItsVerdict) {
  const Config def{{"V", 1}};
  OutputJudge judge(def, {{"y", Tolerance{}}});
  RunJournal run(journal(), key(), true, def);
  // V = 2 lands before the default's outputs: not kept until judged.
  Outputs two{{"y", std::vector<double>(4, 7.0)}};
  judge.observe(timed(2, 0.001), &two);
  run.landed(timed(2, 0.001), &judge);
  EXPECT_FALSE(fs::exists(journal().file_for(key())));
  Outputs reference{{"y", std::vector<double>(4, 0.0)}};
  judge.observe(timed(1, 0.002), &reference);
  run.landed(timed(1, 0.002), &judge);
  RunJournal next(journal(), key(), true, std::nullopt);
  auto two_again = next.take(Config{{"V", 2}});
  ASSERT_TRUE(two_again);
  EXPECT_EQ(two_again->outcome, Outcome::kWrongResult) << "kept with its verdict";
}

}  // namespace
}  // namespace kiln::internal
