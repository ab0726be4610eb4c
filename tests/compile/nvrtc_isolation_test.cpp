// Failure isolation and grouped-vs-separate equivalence, with real NVRTC.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>

#include "cuda/nvrtc_api.hpp"
#include "cuda/nvrtc_compiler.hpp"
#include "kiln/backends/toolchain.hpp"
#include "kiln/compile/compile_engine.hpp"
#include "skip.hpp"
#include "test_kernels.hpp"

namespace kiln {
namespace {

class Isolation : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!cuda::nvrtc().ok()) KILN_SKIP(Skip::kCudaToolkit) << cuda::nvrtc().error().describe();
    context_.toolchain = current_toolchain("cuda");
    context_.env = CacheEnvRegistry::global().snapshot();
  }
  cuda::NvrtcCompiler compiler_;
  CompileContext context_;
};

TEST_F(Isolation, OneBrokenSpecializationInAGroupOfEight) {
  auto t = test::scale_kernel();
  auto units = group(t, t.specialize_all(), GroupOptions{8, "sm_90a", BinaryFormat::kCubin});
  ASSERT_EQ(units.size(), 1u);
  ASSERT_EQ(units[0].specializations.size(), 8u);
  UnitResult r = compile_isolated(compiler_, units[0], CancelToken(), context_);
  ASSERT_EQ(r.entries.size(), 8u);
  EXPECT_EQ(r.ok_count(), 7u);
  // The log named the broken one: one failed program, one alone, one for the rest.
  EXPECT_EQ(r.programs, 3u);
  for (std::size_t i = 0; i < 8; ++i) {
    const auto& s = units[0].specializations[i];
    if (s.config.get_int("N") == 13) {
      ASSERT_FALSE(r.entries[i].ok());
      const ErrorInfo& e = r.entries[i].error();
      EXPECT_EQ(e.code, ErrorCode::kCompileFailed);
      EXPECT_NE(e.describe().find("kiln-test: N must not be 13"), std::string::npos);
      EXPECT_EQ(e.details.at("config"), "N=13");
      EXPECT_EQ(e.details.at("entry"), "scale<13>");
      EXPECT_EQ(e.details.at("isolated_by"), "log");
      EXPECT_NE(e.details.at("options").find("-arch=sm_90a"), std::string::npos);
    } else {
      ASSERT_TRUE(r.entries[i].ok()) << r.entries[i].error().describe();
      const Artifact& a = *r.entries[i];
      EXPECT_EQ(a.group_size, 7u);  // the healthy rest compiled together
      EXPECT_EQ(test::elf_info(*a.binary).machine, test::kEmCuda);
      EXPECT_NE(a.binary->find(a.lowered_name), std::string::npos);
    }
  }
}

TEST_F(Isolation, SplittingFindsWhatTheLogCannotName) {
  auto t = test::scale_kernel();
  std::vector<Specialization> specs;
  for (std::int64_t n : {1, 2, 3}) specs.push_back(t.specialize(Config{{"N", n}}));
  specs.push_back(test::unattributable(t.name));
  auto units = group(t, specs, GroupOptions{4, "sm_80", BinaryFormat::kCubin});
  ASSERT_EQ(units.size(), 1u);
  UnitResult r = compile_isolated(compiler_, units[0], CancelToken(), context_);
  EXPECT_EQ(r.ok_count(), 3u);
  ASSERT_FALSE(r.entries[3].ok());
  EXPECT_EQ(r.entries[3].error().details.at("isolated_by"), "split");
  EXPECT_NE(r.entries[3].error().describe().find("no_such_kernel"), std::string::npos);
  EXPECT_GT(r.programs, 2u);
}

TEST_F(Isolation, GroupedAndSeparateCompilesAreEquivalent) {
  auto t = test::scale_kernel();
  std::vector<Specialization> specs;
  for (std::int64_t n : {1, 2, 3, 4}) specs.push_back(t.specialize(Config{{"N", n}}));
  for (const char* arch : {"sm_80", "sm_90a"}) {
    auto grouped = group(t, specs, GroupOptions{4, arch, BinaryFormat::kCubin});
    auto separate = group(t, specs, GroupOptions{1, arch, BinaryFormat::kCubin});
    ASSERT_EQ(grouped.size(), 1u);
    ASSERT_EQ(separate.size(), 4u);
    UnitResult g = compile_isolated(compiler_, grouped[0], CancelToken(), context_);
    ASSERT_EQ(g.ok_count(), 4u);
    const int sm = std::string(arch) == "sm_80" ? 80 : 90;
    for (std::size_t i = 0; i < 4; ++i) {
      UnitResult s = compile_isolated(compiler_, separate[i], CancelToken(), context_);
      ASSERT_EQ(s.ok_count(), 1u) << s.entries[0].error().describe();
      const Artifact& ga = *g.entries[i];
      const Artifact& sa = *s.entries[0];
      EXPECT_EQ(ga.key, sa.key) << "grouping must not change the artifact key";
      EXPECT_EQ(ga.lowered_name, sa.lowered_name);
      EXPECT_EQ(ga.group_size, 4u);
      EXPECT_EQ(sa.group_size, 1u);
      for (const Artifact* a : {&ga, &sa}) {
        auto elf = test::elf_info(*a->binary);
        EXPECT_EQ(elf.machine, test::kEmCuda);
        EXPECT_EQ(elf.sm, sm);
        EXPECT_NE(a->binary->find(a->lowered_name), std::string::npos);
      }
    }
    // Every lowered name of the group is in the one shared binary.
    std::set<std::string> names;
    for (const auto& e : g.entries) names.insert(e->lowered_name);
    EXPECT_EQ(names.size(), 4u);
  }
}

TEST_F(Isolation, ArtifactMetadataRoundTripsAndRejectsAForeignBinary) {
  auto t = test::scale_kernel();
  UnitResult r = compile_isolated(compiler_, test::single_unit(t, 5), CancelToken(), context_);
  ASSERT_EQ(r.ok_count(), 1u);
  const Artifact& a = *r.entries[0];
  Artifact b = Artifact::from_json(a.to_json(), *a.binary);
  EXPECT_EQ(b.key, a.key);
  EXPECT_EQ(b.lowered_name, a.lowered_name);
  EXPECT_EQ(b.config, a.config);
  EXPECT_EQ(*b.binary, *a.binary);
  EXPECT_EQ(b.compiler, "nvrtc " + compiler_.version());
  try {
    (void)Artifact::from_json(a.to_json(), *a.binary + "x");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kCorrupt);
  }
  // A count that is not a whole number is a damaged entry, never a cast.
  for (const char* field : {"group_size", "binary_size"}) {
    nlohmann::json damaged = a.to_json();
    damaged[field] = 2.5;
    try {
      (void)Artifact::from_json(damaged, *a.binary);
      FAIL() << field;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kCorrupt);
      EXPECT_NE(std::string(e.what()).find("expected a whole number"), std::string::npos)
          << e.what();
    }
  }
}

}  // namespace
}  // namespace kiln
