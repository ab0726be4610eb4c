// tune_request(): a request as text to a TuneResult in one call, in this
// process on the real CPU backend (real compiles and timings). Bad input
// fails at the request step before a device or a cache is touched; a tuned
// result carries the record it saved, and a warm one the record it was
// served from, so a caller never reads the tuning cache back.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "kiln/core/error.hpp"
#include "kiln/kernels/tune_request.hpp"
#include "skip.hpp"

namespace kiln {
namespace {

namespace fs = std::filesystem;

struct RequestDir {
  fs::path dir =
      fs::temp_directory_path() / ("kiln_tune_request_" + std::to_string(::getpid()) + "_" +
                                   ::testing::UnitTest::GetInstance()->current_test_info()->name());
  Options caches = Options::global();
  RequestDir() {
    fs::remove_all(dir);
    caches.cache_dir = dir;
  }
  ~RequestDir() { fs::remove_all(dir); }
};

TuneRequest gemm_request(const std::string& shape) {
  TuneRequest r;
  r.kernel = "gemm_f32";
  r.backend = "cpu";
  r.shape = shape;
  r.isolation = Isolation::kThread;
  return r;
}

TEST(TuneRequest, BadInputFailsAtTheRequestStepAndWritesNothing) {
  RequestDir d;
  auto run = tune_request(gemm_request("M=0,N=8,K=8"), TuneOptions{}, d.caches);
  ASSERT_FALSE(run.ok());
  EXPECT_EQ(run.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(run.error().details.at("step"), "request");
  EXPECT_NE(run.error().message.find("M='0' is not a positive integer"), std::string::npos)
      << run.error().message;
  EXPECT_FALSE(fs::exists(d.dir)) << "bad input opens no cache";

  auto unknown = tune_request(gemm_request("M=8,N=8,K=8,Q=2"), TuneOptions{}, d.caches);
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().details.at("step"), "request");
  EXPECT_NE(unknown.error().message.find("no dimension 'Q'"), std::string::npos);
}

TEST(TuneRequest, ResultsCarryTheirRecord) {
  if (!Options::global().tuning) KILN_SKIP(Skip::kTuningOff) << "KILN_TUNING=0";
  RequestDir d;
  TuneOptions options;
  options.search.strategy = "exhaustive";  // the first 2 in enumeration order
  options.search.max_configs = 2;
  options.pipeline.progress = false;
  auto cold = tune_request(gemm_request("M=16,N=16,K=8"), options, d.caches);
  ASSERT_TRUE(cold.ok()) << cold.error().describe();
  EXPECT_EQ(cold->job.name, "gemm_f32");
  EXPECT_EQ(cold->result.source, ResultSource::kTuned);
  EXPECT_EQ(cold->result.reference.kind, ReferenceReport::Kind::kUser) << "host code, cheap";
  ASSERT_TRUE(cold->result.saved) << cold->result.not_saved_reason;
  ASSERT_TRUE(cold->result.record.has_value());
  EXPECT_EQ(cold->result.record->best, cold->result.config);
  EXPECT_EQ(cold->result.record->measured.size(), 2u);

  auto warm = tune_request(gemm_request("M=16,N=16,K=8"), options, d.caches);
  ASSERT_TRUE(warm.ok()) << warm.error().describe();
  EXPECT_EQ(warm->result.source, ResultSource::kDisk);
  ASSERT_TRUE(warm->result.record.has_value());
  EXPECT_EQ(warm->result.record->best, cold->result.record->best);
  EXPECT_EQ(warm->result.record->measured.size(), 2u);
  EXPECT_EQ(warm->result.record->reference, "user");
}

}  // namespace
}  // namespace kiln
