// The "Extending Kiln" recipe for a cache tier (docs/architecture.md),
// followed to the letter: a toy tier (an in-memory map) defined in this
// file alone and added with one register_cache_tier line; nothing else in
// Kiln names it. Artifacts and tuning records stored through the caches
// land in it, a cache on an empty directory is served from it (and keeps
// what it was served on disk), bytes it garbles are refused with a warning
// while the run goes on, and a second tier under its name is refused.
#include <gtest/gtest.h>

#include <map>
#include <mutex>
#include <utility>

#include "cache_test_util.hpp"
#include "expect_refused.hpp"
#include "kiln/cache/cache_tier.hpp"
#include "kiln/cache/tuning_cache.hpp"

namespace kiln {
namespace {

using testing::options_for;
using testing::TempDir;

// The toy. Registered for the whole process, it answers only while a test
// has switched it on (ToyOn), so the other cache tests that share this
// binary never see it.
class ToyTier : public CacheTier {
 public:
  std::string name() const override { return "toy"; }
  std::optional<std::string> get(TierEntryKind kind, const Hash128& key) override {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!on_) return std::nullopt;
    if (garble_) return std::string("\x03\x00 not what was put", 20);
    auto it = held_.find({kind, key.hex()});
    if (it == held_.end()) return std::nullopt;
    return it->second;
  }
  void put(TierEntryKind kind, const Hash128& key, std::string payload) override {
    std::lock_guard<std::mutex> lock(mutex_);
    if (on_) held_[{kind, key.hex()}] = std::move(payload);
  }

  void switch_on(bool on) {
    std::lock_guard<std::mutex> lock(mutex_);
    on_ = on;
    garble_ = false;
    held_.clear();
  }
  void garble() {
    std::lock_guard<std::mutex> lock(mutex_);
    garble_ = true;
  }
  std::size_t held(TierEntryKind kind) {
    std::lock_guard<std::mutex> lock(mutex_);
    std::size_t n = 0;
    for (const auto& [where, payload] : held_) n += where.first == kind;
    return n;
  }

 private:
  std::mutex mutex_;
  bool on_ = false;
  bool garble_ = false;
  std::map<std::pair<TierEntryKind, std::string>, std::string> held_;
};

ToyTier& toy() {
  static std::shared_ptr<ToyTier> tier = [] {
    auto made = std::make_shared<ToyTier>();
    register_cache_tier(made);  // the one line of the recipe
    return made;
  }();
  return *tier;
}

// The toy answers for one test's scope.
struct ToyOn {
  ToyOn() { toy().switch_on(true); }
  ~ToyOn() { toy().switch_on(false); }
};

ProblemKey problem(std::int64_t m) {
  return ProblemKey("gemm").scalar("M", m);
}

TEST(ExtendingTier, AStoredArtifactIsServedFromTheTierToAnEmptyCache) {
  ToyOn on;
  TempDir first, second;
  const CachedArtifact stored = testing::test_artifact(1, 4096);
  {
    ArtifactCache cache(options_for(first.path()));
    ASSERT_EQ(cache.store(testing::test_key(1), stored).value(), StoreOutcome::kWritten);
  }
  EXPECT_EQ(toy().held(TierEntryKind::kArtifact), 1u) << "the store reached the tier";

  ArtifactCache fresh(options_for(second.path()));
  auto hit = fresh.lookup(testing::test_key(1));
  ASSERT_NE(hit, nullptr) << "served by the tier";
  EXPECT_EQ(hit->binary, stored.binary);
  EXPECT_EQ(hit->meta, stored.meta);
  const ArtifactCacheStats stats = fresh.stats();
  EXPECT_EQ(stats.disk_hits, 0u);
  EXPECT_EQ(stats.remote_hits, 1u) << "counted as a hit behind the disk, as the remote tier's";
  EXPECT_EQ(stats.tier_hits, (std::map<std::string, std::uint64_t>{{"toy", 1}}));
  EXPECT_EQ(stats.to_json()["tier_hits"]["toy"], 1);
  EXPECT_EQ(stats.to_json()["remote_hits"], 1);

  // Written to the local disk: the next cache there is warm without the tier.
  toy().switch_on(false);
  ArtifactCache offline(options_for(second.path()));
  ASSERT_NE(offline.lookup(testing::test_key(1)), nullptr);
  EXPECT_EQ(offline.stats().disk_hits, 1u);
}

TEST(ExtendingTier, ASavedTuningRecordIsServedFromTheTierToAnEmptyCache) {
  ToyOn on;
  TempDir first, second;
  {
    TuningCache cache(options_for(first.path()));
    cache.put(testing::test_record("gemm", 128, 0.5));
    ASSERT_EQ(cache.save().value(), StoreOutcome::kWritten);
  }
  EXPECT_EQ(toy().held(TierEntryKind::kRecord), 1u) << "the save reached the tier";

  TuningCache fresh(options_for(second.path()));
  auto hit = fresh.lookup(problem(128), testing::test_identity());
  ASSERT_TRUE(hit.has_value()) << "served by the tier";
  EXPECT_DOUBLE_EQ(hit->best_time_ms, 0.5);
  EXPECT_EQ(hit->best, testing::test_record("gemm", 128, 0.5).best);
  EXPECT_FALSE(fresh.lookup(problem(256), testing::test_identity()).has_value());

  toy().switch_on(false);
  TuningCache offline(options_for(second.path()));
  EXPECT_TRUE(offline.lookup(problem(128), testing::test_identity()).has_value())
      << "the tier's record was saved to the local disk";
}

TEST(ExtendingTier, GarbageFromATierIsRefusedWithAWarningAndTheRunGoesOn) {
  ToyOn on;
  TempDir dir;
  toy().garble();
  ArtifactCache artifacts(options_for(dir.path()));
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(artifacts.lookup(testing::test_key(2)), nullptr);
  std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("from the toy cache tier not used"), std::string::npos) << err;
  EXPECT_EQ(artifacts.stats().remote_hits, 0u);
  EXPECT_EQ(artifacts.stats().misses, 1u);
  // The run goes on: the artifact is compiled and stored as on any miss.
  const CachedArtifact compiled = testing::test_artifact(2, 1024);
  ASSERT_EQ(artifacts.store(testing::test_key(2), compiled).value(), StoreOutcome::kWritten);
  artifacts.clear_memory();
  auto again = artifacts.lookup(testing::test_key(2));
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(again->binary, compiled.binary) << "the disk holds what was compiled";

  TuningCache tunings(options_for(dir.path()));
  ::testing::internal::CaptureStderr();
  EXPECT_FALSE(tunings.lookup(problem(64), testing::test_identity()).has_value());
  err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("from the toy cache tier not used"), std::string::npos) << err;
  EXPECT_TRUE(tunings.records().empty()) << "nothing refused reaches the disk";
}

TEST(ExtendingTier, AnotherRecordUnderTheWantedIdIsRefused) {
  // Bytes that parse but answer another question: the caches' own checks,
  // not the tier, keep them out.
  ToyOn on;
  TempDir dir;
  const TuningRecord other = testing::test_record("gemm", 512, 0.5);
  const Hash128 wanted = testing::test_record("gemm", 128, 0.5).id();
  toy().put(TierEntryKind::kRecord, wanted, other.to_json().dump());
  TuningCache tunings(options_for(dir.path()));
  ::testing::internal::CaptureStderr();
  EXPECT_FALSE(tunings.lookup(problem(128), testing::test_identity()).has_value());
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("it is the record of another problem"), std::string::npos) << err;
}

class NamedTier : public CacheTier {
 public:
  explicit NamedTier(std::string name) : name_(std::move(name)) {}
  std::string name() const override { return name_; }
  std::optional<std::string> get(TierEntryKind, const Hash128&) override { return std::nullopt; }
  void put(TierEntryKind, const Hash128&, std::string) override {}

 private:
  std::string name_;
};

TEST(ExtendingTier, ATierIsRegisteredOnceUnderANameOfItsOwn) {
  toy();
  std::size_t toys = 0;
  for (const auto& tier : cache_tiers()) toys += tier->name() == "toy";
  EXPECT_EQ(toys, 1u);
  auto refused = [](std::shared_ptr<CacheTier> tier, const std::string& says) {
    testing::expect_refused([&] { register_cache_tier(std::move(tier)); }, says);
  };
  refused(std::make_shared<NamedTier>("toy"), "\"toy\" is registered already");
  refused(std::make_shared<NamedTier>(""), "name it");
  refused(nullptr, "the tier is null");
}

}  // namespace
}  // namespace kiln
