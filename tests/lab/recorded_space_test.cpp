// Recorded spaces (Kernel Tuner cache files) and strategies replayed on them,
// against a small file whose answers are worked out by hand.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "kiln/lab/recorded_space.hpp"
#include "kiln/lab/search_replay.hpp"
#include "kiln/search/search.hpp"
#include "kiln/tuner/kernel_tuner_export.hpp"

namespace kiln {
namespace {

// Four configs of a 2x2 space (x in {1,2}, y in {8,16}); (2,16) failed to
// run; (2,8) is the optimum at 1 ms; (1,16) is absent (ruled out).
const char* kTinyFile = R"({
  "device_name": "Test GPU", "kernel_name": "tiny", "objective": "time",
  "tune_params_keys": ["x", "y"],
  "tune_params": {"x": [1, 2], "y": [8, 16]},
  "cache": {
    "1,8":  {"x": 1, "y": 8,  "time": 4.0, "compile_time": 1000, "benchmark_time": 100},
    "2,8":  {"x": 2, "y": 8,  "time": 1.0, "compile_time": 2000, "benchmark_time": 100},
    "2,16": {"x": 2, "y": 16, "time": "RuntimeFailedConfig", "compile_time": 500, "benchmark_time": 0}
  }})";

class RecordedSpaceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/kiln-recorded-XXXXXX";
    dir_ = ::mkdtemp(dir);
    file_ = dir_ / "tiny.json";
    std::ofstream(file_) << kTinyFile;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_, file_;
};

TEST_F(RecordedSpaceTest, ReadsParametersConfigsFailuresAndTheOptimum) {
  Result<RecordedSpace> r = read_recorded_space(file_);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->device, "Test GPU");
  EXPECT_EQ(r->configs.size(), 3u);
  EXPECT_DOUBLE_EQ(r->optimum_ms, 1.0);
  EXPECT_EQ(r->space.size(), 3u) << "only recorded configs are in the space";
  const RecordedConfig* failed = r->find(Config{{"x", std::int64_t{2}}, {"y", std::int64_t{16}}});
  ASSERT_NE(failed, nullptr);
  EXPECT_FALSE(failed->time_ms);
  EXPECT_EQ(failed->failure, "RuntimeFailedConfig");
  EXPECT_EQ(r->find(Config{{"x", std::int64_t{1}}, {"y", std::int64_t{16}}}), nullptr);
}

// A value listed in tune_params that no record takes (one a restriction
// ruled out entirely) is no part of the space: it is dropped from the
// parameter's list, so a search encodes the space as the same run's T4
// file, which lists only values taken, and every strategy replays alike.
TEST_F(RecordedSpaceTest, ListedValuesNoRecordTakesAreNotPartOfTheSpace) {
  nlohmann::json padded = nlohmann::json::parse(kTinyFile);
  padded["tune_params"]["x"] = {0, 1, 2, 3};
  padded["tune_params"]["y"] = {4, 8, 16, 32, 64};
  std::ofstream(dir_ / "padded.json") << padded.dump();
  Result<RecordedSpace> a = read_recorded_space(dir_ / "padded.json");
  Result<RecordedSpace> b = read_recorded_space(file_);
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_EQ(a->space.parameters().size(), 2u);
  for (std::size_t p = 0; p < 2; ++p)
    EXPECT_EQ(a->space.parameters()[p].values, b->space.parameters()[p].values) << p;
  EXPECT_EQ(a->space.default_config(), b->space.default_config());
  for (const auto& info : search_strategies()) {
    Result<ReplayCurve> ca = replay_search(*a, info.name, 3, 5);
    Result<ReplayCurve> cb = replay_search(*b, info.name, 3, 5);
    ASSERT_TRUE(ca.ok() && cb.ok()) << info.name;
    EXPECT_EQ(ca->fraction, cb->fraction) << info.name;
    EXPECT_EQ(ca->seconds, cb->seconds) << info.name;
  }
}

TEST_F(RecordedSpaceTest, ReadsGzippedFiles) {
  ASSERT_EQ(std::system(("gzip -k " + file_.string()).c_str()), 0);
  Result<RecordedSpace> r = read_recorded_space(file_.string() + ".gz");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->configs.size(), 3u);
}

// A gzip stream cut short (an interrupted download) ends as a whole one
// does, gzread returning 0: it used to read as a shorter file, and the open
// cache recovery then made a smaller space of it, silently.
TEST_F(RecordedSpaceTest, ATruncatedGzipIsRefusedNotReadAsAShorterSpace) {
  std::string text = R"({"tune_params_keys": ["x"], "tune_params": {"x": [)";
  for (int x = 0; x < 400; ++x) text += (x ? "," : "") + std::to_string(x);
  text += "]}, \"cache\": {";
  for (int x = 0; x < 400; ++x)
    text += std::string(x ? "," : "") + "\n\"" + std::to_string(x) +
            "\": {\"x\": " + std::to_string(x) +
            ", \"time\": " + std::to_string(1.0 + (x * 7919 % 401) / 3.0) +
            ", \"compile_time\": " + std::to_string(x * 31 % 97) + ", \"benchmark_time\": 1}";
  text += "\n}\n}";
  const std::filesystem::path plain = dir_ / "long.json", gz = dir_ / "long.json.gz";
  std::ofstream(plain) << text;
  ASSERT_EQ(std::system(("gzip -k " + plain.string()).c_str()), 0);
  Result<RecordedSpace> whole = read_recorded_space(gz);
  ASSERT_TRUE(whole.ok()) << whole.error().message;
  ASSERT_EQ(whole->configs.size(), 400u);
  std::filesystem::resize_file(gz, std::filesystem::file_size(gz) / 2);
  Result<RecordedSpace> cut = read_recorded_space(gz);
  ASSERT_FALSE(cut.ok()) << "read as " << cut->configs.size() << " configs";
  const std::string& why = cut.error().message;
  EXPECT_NE(why.find(gz.string() + " is truncated or corrupt"), std::string::npos) << why;
  EXPECT_NE(why.find("gunzip -t"), std::string::npos) << why;
}

TEST_F(RecordedSpaceTest, ExhaustiveReplayMatchesTheHandComputedCurve) {
  Result<RecordedSpace> r = read_recorded_space(file_);
  ASSERT_TRUE(r.ok());
  // Odometer order, last parameter fastest: (1,8) 4 ms, (2,8) 1 ms, (2,16) failed.
  Result<ReplayCurve> curve = replay_search(*r, "exhaustive", 3, 1);
  ASSERT_TRUE(curve.ok()) << curve.error().message;
  ASSERT_EQ(curve->fraction.size(), 3u);
  EXPECT_DOUBLE_EQ(curve->fraction[0], 0.25);
  EXPECT_DOUBLE_EQ(curve->fraction[1], 1.0);
  EXPECT_DOUBLE_EQ(curve->fraction[2], 1.0);
  EXPECT_DOUBLE_EQ(curve->seconds[0], 1.1);
  EXPECT_DOUBLE_EQ(curve->seconds[2], 1.1 + 2.1 + 0.5);
  EXPECT_DOUBLE_EQ(fraction_after(*curve, 1), 0.25);
  EXPECT_DOUBLE_EQ(fraction_after(*curve, 99), 1.0);
}

TEST_F(RecordedSpaceTest, EveryStrategyRespectsTheBudgetAndIsDeterministicForASeed) {
  Result<RecordedSpace> r = read_recorded_space(file_);
  ASSERT_TRUE(r.ok());
  for (const auto& info : search_strategies()) {
    Result<ReplayCurve> a = replay_search(*r, info.name, 2, 7);
    Result<ReplayCurve> b = replay_search(*r, info.name, 2, 7);
    ASSERT_TRUE(a.ok() && b.ok()) << info.name;
    EXPECT_LE(a->fraction.size(), 2u) << info.name;
    EXPECT_EQ(a->fraction, b->fraction) << info.name;
  }
  EXPECT_FALSE(replay_search(*r, "no-such-strategy", 2, 1).ok());
}

TEST_F(RecordedSpaceTest, BadFilesAreNamedWithWhatIsWrong) {
  std::ofstream(dir_ / "not.json") << "{ not json";
  std::ofstream(dir_ / "other.json") << R"({"hello": 1})";
  for (const char* name : {"not.json", "other.json", "absent.json"}) {
    Result<RecordedSpace> r = read_recorded_space(dir_ / name);
    ASSERT_FALSE(r.ok()) << name;
    EXPECT_NE(r.error().message.find(name), std::string::npos) << r.error().message;
  }
  // Why it is no JSON, in the parser's words and where: NaN and Infinity
  // (Python's json.dumps writes them) and a missing comma are named.
  const std::string nan_text = R"({"tune_params_keys": ["x"], "tune_params": {"x": [1]},
      "cache": {"1": {"x": 1, "time": NaN}}})";
  Result<RecordedSpace> nan = parse_recorded_space(nan_text, "nan.json");
  ASSERT_FALSE(nan.ok());
  EXPECT_NE(nan.error().message.find("nan.json is not a JSON object"), std::string::npos)
      << nan.error().message;
  EXPECT_NE(nan.error().message.find("stopped at byte " + std::to_string(nan_text.find("NaN") + 1)),
            std::string::npos)
      << nan.error().message;
  EXPECT_NE(nan.error().message.find("NaN and Infinity, which Python's json.dumps writes"),
            std::string::npos)
      << nan.error().message;
  Result<RecordedSpace> comma = parse_recorded_space(
      R"({"tune_params_keys": ["x"] "tune_params": {"x": [1]}, "cache": {}})", "comma.json");
  ASSERT_FALSE(comma.ok());
  EXPECT_NE(comma.error().message.find("unexpected string literal; expected '}' (a comma missing"),
            std::string::npos)
      << comma.error().message;
  // A list no space can hold (values of two types) is an error naming the
  // file, returned rather than thrown.
  std::ofstream(dir_ / "mixed.json")
      << R"({"tune_params_keys": ["m"], "tune_params": {"m": [1, "x"]},
             "cache": {"a": {"m": 1, "time": 1.0}, "b": {"m": "x", "time": 2.0}}})";
  Result<RecordedSpace> mixed = read_recorded_space(dir_ / "mixed.json");
  ASSERT_FALSE(mixed.ok());
  EXPECT_NE(mixed.error().message.find("mixed.json: bad parameter list"), std::string::npos)
      << mixed.error().message;
}

// Times that are no measurement are failures, not optima: Kernel Tuner's
// older error value 1e20, zero, a negative time. A negative compile cost is
// a malformed record, named; a parameter value too large for an integer
// stays a value (its text) instead of an undefined cast.
TEST_F(RecordedSpaceTest, TimesThatAreNoMeasurementAreFailuresNotOptima) {
  std::ofstream(dir_ / "marks.json") << R"({
    "tune_params_keys": ["x", "y"], "tune_params": {"x": [1, 2, 3, 4], "y": [1e30]},
    "cache": {
      "1": {"x": 1, "y": 1e30, "time": 1e20, "compile_time": 10, "benchmark_time": 1},
      "2": {"x": 2, "y": 1e30, "time": 0, "compile_time": 10, "benchmark_time": 1},
      "3": {"x": 3, "y": 1e30, "time": -2.5, "compile_time": 10, "benchmark_time": 1},
      "4": {"x": 4, "y": 1e30, "time": 3.0}
    }})";
  Result<RecordedSpace> r = read_recorded_space(dir_ / "marks.json");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_DOUBLE_EQ(r->optimum_ms, 3.0);
  ASSERT_EQ(r->configs.size(), 4u);
  auto with_x = [&](std::int64_t x) {
    return r->find(Config{{"x", x}, {"y", std::string("1e+30")}});
  };
  const RecordedConfig* error_value = with_x(1);
  ASSERT_NE(error_value, nullptr) << "a huge float value is kept as its text";
  EXPECT_FALSE(error_value->time_ms);
  EXPECT_NE(error_value->failure.find("failed config"), std::string::npos) << error_value->failure;
  for (std::int64_t x : {2, 3}) {
    const RecordedConfig* c = with_x(x);
    ASSERT_NE(c, nullptr);
    EXPECT_FALSE(c->time_ms) << x;
    EXPECT_NE(c->failure.find("not a positive duration"), std::string::npos) << c->failure;
  }
  Result<ReplayCurve> curve = replay_search(*r, "exhaustive", 4, 1);
  ASSERT_TRUE(curve.ok()) << curve.error().message;
  EXPECT_EQ(curve->fraction, (std::vector<double>{0, 0, 0, 1}));

  std::ofstream(dir_ / "backwards.json") << R"({
    "tune_params_keys": ["x"], "tune_params": {"x": [1]},
    "cache": {"1": {"x": 1, "time": 2.0, "compile_time": -5}}})";
  Result<RecordedSpace> bad = read_recorded_space(dir_ / "backwards.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("compile_time -5"), std::string::npos) << bad.error().message;
  EXPECT_NE(bad.error().message.find("\"1\""), std::string::npos) << bad.error().message;
}

// A record no search can reach is refused, not counted: a value outside its
// parameter's list, or a second record of one config. Either, were it the
// fastest, would make every replay report a fraction of an optimum it
// cannot reach.
TEST_F(RecordedSpaceTest, RecordsNoSearchCanReachAreRefusedByName) {
  const std::string head = R"({"tune_params_keys": ["x"], "tune_params": {"x": [1, 2]}, "cache": {
      "1": {"x": 1, "time": 4.0}, "2": {"x": 2, "time": 3.0}, )";
  Result<RecordedSpace> outside =
      parse_recorded_space(head + R"("5": {"x": 5, "time": 1.0}}})", "outside.json");
  ASSERT_FALSE(outside.ok());
  EXPECT_NE(outside.error().message.find("\"5\" has x=5, not among tune_params' values [1,2]"),
            std::string::npos)
      << outside.error().message;
  Result<RecordedSpace> twice =
      parse_recorded_space(head + R"("2b": {"x": 2, "time": 1.0}}})", "twice.json");
  ASSERT_FALSE(twice.ok());
  EXPECT_NE(twice.error().message.find("\"2\" and \"2b\" hold the same config"), std::string::npos)
      << twice.error().message;
  Result<RecordedSpace> fine =
      parse_recorded_space(head + R"("x": {"x": 1.0, "time": 9}}})", "fine.json");
  ASSERT_FALSE(fine.ok()) << "1.0 is the integer 1: a second record of x=1";
  Result<RecordedSpace> ok = parse_recorded_space(
      R"({"tune_params_keys": ["x"], "tune_params": {"x": [1.0, 2.5]}, "cache": {
          "a": {"x": 1, "time": 2}, "b": {"x": 2.5, "time": 1}}})",
      "floats.json");
  ASSERT_TRUE(ok.ok()) << ok.error().message;
  EXPECT_EQ(ok->space.size(), 2u);
  EXPECT_DOUBLE_EQ(ok->optimum_ms, 1.0);
  ASSERT_NE(ok->find(Config{{"x", std::string("1.0")}}), nullptr)
      << "a float parameter's values are text, 1 and 1.0 alike";
  EXPECT_DOUBLE_EQ(*ok->find(Config{{"x", std::string("2.5")}})->time_ms, 1.0);
}

// Labels of another JSON type are shown as their JSON (they used to throw
// a bare type error naming neither file nor field); a file naming no
// parameter is refused by name.
TEST_F(RecordedSpaceTest, LabelsOfAnyTypeAreShownAndAFileWithoutParametersIsNamed) {
  Result<RecordedSpace> r = parse_recorded_space(
      R"({"device_name": 5, "kernel_name": null, "tune_params_keys": ["x"],
          "tune_params": {"x": [1]}, "cache": {"1": {"x": 1, "time": 2}}})",
      "labels.json");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->device, "5");
  EXPECT_EQ(r->kernel, "unknown kernel");
  Result<RecordedSpace> none = parse_recorded_space(
      R"({"tune_params_keys": [], "tune_params": {}, "cache": {"a": {"time": 1}}})", "none.json");
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().message.find("none.json: \"tune_params_keys\" names no parameter"),
            std::string::npos)
      << none.error().message;
}

// A recorded space of many parameters holds a vanishing share of their
// product. Exhaustive search walks it as it goes (listing it first never
// ended), and the default comes from the records, not from a scan of the
// product that finds nothing in its first million candidates.
std::string sparse_file(int params, const std::vector<std::uint64_t>& positions) {
  nlohmann::json keys = nlohmann::json::array(), lists = nlohmann::json::object(),
                 cache = nlohmann::json::object();
  for (int p = 0; p < params; ++p) {
    keys.push_back("p" + std::to_string(p));
    lists["p" + std::to_string(p)] = {0, 1};
  }
  double time = 1;
  for (std::uint64_t at : positions) {
    nlohmann::json record = {{"time", time++}};
    for (int p = 0; p < params; ++p)  // the last parameter varies fastest
      record["p" + std::to_string(p)] = (at >> (params - 1 - p)) & 1;
    cache[std::to_string(at)] = record;
  }
  return nlohmann::json{{"tune_params_keys", keys}, {"tune_params", lists}, {"cache", cache}}
      .dump();
}

TEST_F(RecordedSpaceTest, ASparseSpaceOfManyParametersIsWalkedNotListed) {
  Result<RecordedSpace> r = parse_recorded_space(sparse_file(34, {5, 100, 4000}), "sparse.json");
  ASSERT_TRUE(r.ok()) << r.error().message;
  Result<ReplayCurve> curve = replay_search(*r, "exhaustive", 3, 1);
  ASSERT_TRUE(curve.ok()) << curve.error().message;
  ASSERT_EQ(curve->measured.size(), 3u);
  EXPECT_EQ(curve->fraction, (std::vector<double>{1, 1, 1})) << "the fastest is at position 5";

  Result<RecordedSpace> far = parse_recorded_space(
      sparse_file(34, {std::uint64_t{1} << 30, std::uint64_t{1} << 31}), "far.json");
  ASSERT_TRUE(far.ok()) << far.error().message;
  EXPECT_EQ(far->space.default_config().at("p3"), Value(std::int64_t{1}))
      << "the default is the first record (2^30: p3 is its one set bit)";
  for (const char* strategy : {"random", "hybrid"}) {
    Result<ReplayCurve> c = replay_search(*far, strategy, 4, 1);
    ASSERT_TRUE(c.ok()) << strategy << ": " << c.error().message;
    EXPECT_LE(c->measured.size(), 4u) << strategy;
  }
}

// What `kiln cache export --format kernel-tuner` writes reads back as a
// recorded space: configs, times, failures and the optimum.
TEST_F(RecordedSpaceTest, AKilnRecordExportsAsAKernelTunerFileAndReadsBack) {
  TuningRecord record;
  record.problem = ProblemKey("k");
  record.device.name = "Test CPU";
  auto cfg = [](std::int64_t bm, const char* layout) {
    return Config{{"BM", bm}, {"LAYOUT", std::string(layout)}};
  };
  record.measured = {{cfg(16, "row"), 2.0, true, ""},
                     {cfg(32, "row"), 0.5, true, ""},
                     {cfg(32, "col"), 0, false, "compile_failed: error: too many registers"},
                     {cfg(64, "col"), 0, false, "launch_failed: out of resources"},
                     // Labelled by the outcome, not by words in the log.
                     {cfg(16, "col"), 0, false,
                      "launch_failed: the kernel compiled for sm_90 cannot run on sm_80"},
                     {cfg(64, "row"), 0, false, "load_failed: the driver refused the cubin"},
                     {cfg(128, "row"), 0, false, "timeout: compile passed its deadline"},
                     {cfg(128, "col"), 0, false, "crashed: SIGSEGV"}};
  Result<nlohmann::json> file = kernel_tuner_cache(record);
  ASSERT_TRUE(file.ok()) << file.error().message;
  std::ofstream(dir_ / "export.json") << file->dump();
  Result<RecordedSpace> back = read_recorded_space(dir_ / "export.json");
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->device, "Test CPU");
  EXPECT_EQ(back->configs.size(), 8u);
  EXPECT_DOUBLE_EQ(back->optimum_ms, 0.5);
  EXPECT_EQ(back->find(cfg(32, "col"))->failure, "CompilationFailedConfig");
  EXPECT_EQ(back->find(cfg(64, "col"))->failure, "RuntimeFailedConfig");
  EXPECT_EQ(back->find(cfg(16, "col"))->failure, "RuntimeFailedConfig");
  EXPECT_EQ(back->find(cfg(64, "row"))->failure, "CompilationFailedConfig");
  EXPECT_EQ(back->find(cfg(128, "row"))->failure, "CompilationFailedConfig");
  EXPECT_EQ(back->find(cfg(128, "col"))->failure, "RuntimeFailedConfig");
  EXPECT_DOUBLE_EQ(*back->find(cfg(16, "row"))->time_ms, 2.0);
  record.measured.clear();
  EXPECT_FALSE(kernel_tuner_cache(record).ok()) << "a record without measurements exports nothing";
}

}  // namespace
}  // namespace kiln
