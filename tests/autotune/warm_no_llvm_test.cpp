// A run served from the cache maps no compiler (issue 58): a program built
// as the `kiln` command is (warm_child.cpp) tunes a CPU kernel in one
// process, then a NEW process over the same cache serves it with no
// libLLVM or libclang-cpp mapped (read from its own /proc/self/maps at the
// end of its run) and a correct result. A damaged stored shared object is
// found by the cache's digest, never loaded, and compiled again.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "kiln/cache/artifact_cache.hpp"
#include "kiln/core/hash.hpp"
#include "kiln/core/options.hpp"
#include "run_command.hpp"

namespace kiln {
namespace {

namespace fs = std::filesystem;

class WarmNoLlvm : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("kiln_warm_no_llvm_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // One run of the child over this test's cache; its JSON and stderr.
  nlohmann::json child(std::string* err = nullptr) const {
    const fs::path err_file = dir_ / "stderr.txt";
    const auto run = testing::run_command("env KILN_CACHE_DIR=" + (dir_ / "cache").string() +
                                          " KILN_TUNING= KILN_RETUNE= " KILN_WARM_CHILD_PATH " 2>" +
                                          err_file.string());
    std::ifstream in(err_file);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (err) *err = text;
    EXPECT_EQ(run.exit_code, 0) << text;
    if (run.exit_code != 0) return nlohmann::json::object();
    return run.json();
  }

  fs::path dir_;
};

TEST_F(WarmNoLlvm, ASecondProcessServesFromTheCacheWithNoCompilerMapped) {
  const nlohmann::json cold = child();
  ASSERT_FALSE(cold.empty());
  EXPECT_EQ(cold["source"], "tuned");
  EXPECT_TRUE(cold["correct"].get<bool>()) << cold.dump();
  // The cold process compiled: the check below can see a compiler.
  EXPECT_FALSE(cold["compiler_maps"].empty()) << cold.dump();

  const nlohmann::json warm = child();
  ASSERT_FALSE(warm.empty());
  EXPECT_EQ(warm["source"], "disk") << warm.dump();
  EXPECT_EQ(warm["config"], cold["config"]);
  EXPECT_TRUE(warm["correct"].get<bool>()) << warm.dump();
  ASSERT_TRUE(warm["libc_mapped"].get<bool>()) << "the maps were not read";
  EXPECT_TRUE(warm["compiler_maps"].empty()) << "the warm process mapped " << warm.dump();
}

// The host CPU's remembered LLVM answer (<cache>/host-cpu/*.json) damaged:
// the next process asks LLVM once more, keys the same (served from the
// cache, nothing compiled) and writes it again; the one after maps no LLVM.
TEST_F(WarmNoLlvm, ADamagedHostCpuMemoMeansAskingLlvmOnce) {
  ASSERT_FALSE(child().empty());
  int damaged = 0;
  for (const auto& entry : fs::directory_iterator(dir_ / "cache" / "host-cpu")) {
    std::ofstream(entry.path(), std::ios::trunc) << "{\"version\": 1, \"name\": ";
    ++damaged;
  }
  ASSERT_EQ(damaged, 1);
  const nlohmann::json asked = child();
  ASSERT_FALSE(asked.empty());
  EXPECT_EQ(asked["source"], "disk") << asked.dump();
  EXPECT_TRUE(asked["correct"].get<bool>());
  EXPECT_FALSE(asked["compiler_maps"].empty()) << "LLVM was not asked: " << asked.dump();
  const nlohmann::json warm = child();
  ASSERT_FALSE(warm.empty());
  EXPECT_EQ(warm["source"], "disk");
  EXPECT_TRUE(warm["compiler_maps"].empty()) << warm.dump();
}

// Every stored program damaged: the cache's digest refuses it (never
// dlopen'ed), a warning names the file, and the run compiles it again and
// is still correct.
TEST_F(WarmNoLlvm, ADamagedStoredSharedObjectIsCompiledAgainNotLoaded) {
  ASSERT_FALSE(child().empty());
  int damaged = 0;
  for (const auto& entry : fs::recursive_directory_iterator(dir_ / "cache" / "artifacts")) {
    if (entry.path().extension() != ".prog") continue;
    const auto size = fs::file_size(entry.path());
    std::fstream f(entry.path(), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(size / 2));
    f.put('\x5a');
    f.put('\xa5');
    ++damaged;
  }
  ASSERT_GT(damaged, 0) << "no stored program to damage";
  std::string err;
  const nlohmann::json warm = child(&err);
  ASSERT_FALSE(warm.empty()) << err;
  EXPECT_TRUE(warm["correct"].get<bool>()) << warm.dump();
  EXPECT_NE(err.find(".prog"), std::string::npos) << "no warning named the file:\n" << err;
}

// Bytes that pass the cache's digest but are no loadable shared object (a
// truncated one stored whole, as another Kiln or a hand could write it):
// refused before dlopen sees them, with a warning naming the entry, and
// compiled again.
TEST_F(WarmNoLlvm, AForeignSharedObjectUnderAValidDigestIsCompiledAgain) {
  ASSERT_FALSE(child().empty());
  Options o = Options::global();
  o.cache_dir = dir_ / "cache";
  int replaced = 0;
  {
    ArtifactCache cache(o);
    for (const ArtifactFileInfo& f : cache.scan(false)) {
      if (f.is_program || f.temporary) continue;
      auto found = cache.lookup(f.key);
      ASSERT_TRUE(found);
      ASSERT_EQ(found->meta.value("format", ""), "cpu_shared_object") << found->meta.dump();
      CachedArtifact foreign = *found;
      foreign.binary.resize(foreign.binary.size() / 3);  // headers past the end
      foreign.meta["binary_size"] = foreign.binary.size();
      foreign.meta["binary_hash"] = hash128(foreign.binary).hex();
      ASSERT_TRUE(cache.store(f.key, foreign).ok());
      ++replaced;
    }
  }
  ASSERT_GT(replaced, 0);
  std::string err;
  const nlohmann::json warm = child(&err);
  ASSERT_FALSE(warm.empty()) << err;
  EXPECT_EQ(warm["source"], "disk") << warm.dump();
  EXPECT_TRUE(warm["correct"].get<bool>()) << warm.dump();
  EXPECT_NE(err.find(".kiln"), std::string::npos) << "no warning named the entry:\n" << err;
  EXPECT_NE(err.find("truncated"), std::string::npos) << err;
}

}  // namespace
}  // namespace kiln
