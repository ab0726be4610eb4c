// Kernel templates: placeholders, specialisation and their error cases.
#include <gtest/gtest.h>

#include "kiln/compile/kernel.hpp"

namespace kiln {
namespace {

KernelTemplate axpy() {
  KernelTemplate t;
  t.name = "axpy";
  t.source = "template <int N, bool F> __global__ void axpy(float* y) {}";
  t.entry = "axpy<{N},{FAST}>";
  t.defines = {{"KILN_UNROLL", "{UNROLL}"}};
  t.options = {"-DKILN_TAG={{{N}}}"};
  t.space.param("N", {1, 2, 4}).param("FAST", {Value{true}, Value{false}}).param("UNROLL", {1, 4});
  t.space.constraint("N*UNROLL<=8",
                     [](const Config& c) { return c.get_int("N") * c.get_int("UNROLL") <= 8; });
  return t;
}

TEST(Placeholders, ParsesNamesOffsetsAndEscapes) {
  auto p = parse_placeholders("gemm<{BM},{{x}},{B_2}>");
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(p[0].name, "BM");
  EXPECT_EQ(p[0].offset, 5u);
  EXPECT_EQ(p[0].length, 4u);
  EXPECT_EQ(p[1].name, "B_2");
  EXPECT_EQ(substitute("gemm<{BM},{{x}},{B_2}>",
                       Config{{"BM", std::int64_t{64}}, {"B_2", std::string("y")}}),
            "gemm<64,{x},y>");
}

TEST(Placeholders, MalformedPatternsNameTheOffset) {
  for (const char* bad : {"gemm<{BM>", "gemm<{}>", "gemm<{1x}>", "a}b", "{B M}"}) {
    try {
      (void)parse_placeholders(bad);
      FAIL() << "accepted " << bad;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
      EXPECT_NE(std::string(e.what()).find("offset"), std::string::npos) << e.what();
    }
  }
}

TEST(Placeholders, MissingValueNamesThePlaceholder) {
  try {
    (void)substitute("k<{BM},{BN}>", Config{{"BM", std::int64_t{1}}});
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("{BN}"), std::string::npos) << e.what();
  }
}

TEST(KernelTemplate, SpecializeFillsEntryDefinesAndOptions) {
  auto t = axpy();
  Specialization s =
      t.specialize(Config{{"N", std::int64_t{2}}, {"FAST", true}, {"UNROLL", std::int64_t{4}}});
  EXPECT_EQ(s.kernel, "axpy");
  EXPECT_EQ(s.entry, "axpy<2,true>");
  EXPECT_EQ(s.defines.at("KILN_UNROLL"), "4");
  ASSERT_EQ(s.options.size(), 1u);
  EXPECT_EQ(s.options[0], "-DKILN_TAG={2}");
  EXPECT_TRUE(t.check().empty());
  EXPECT_EQ(t.specialize_all().size(), t.space.size());
}

TEST(KernelTemplate, PlaceholderWithoutParameterIsMisuse) {
  auto t = axpy();
  t.entry = "axpy<{N},{FAST},{TILE}>";
  try {
    (void)t.check();
    FAIL();
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("{TILE}"), std::string::npos) << what;
    EXPECT_NE(what.find("space.param"), std::string::npos) << what;
  }
}

TEST(KernelTemplate, UnusedParameterIsReportedNotFatal) {
  auto t = axpy();
  t.defines.clear();
  auto unused = t.check();
  ASSERT_EQ(unused.size(), 1u);
  EXPECT_EQ(unused[0], "UNROLL");
  // Still specialises (and warns once).
  EXPECT_NO_THROW((void)t.specialize(
      Config{{"N", std::int64_t{1}}, {"FAST", false}, {"UNROLL", std::int64_t{1}}}));
}

TEST(KernelTemplate, ConfigOutsideTheSpaceIsMisuse) {
  auto t = axpy();
  auto expect_throw = [&](const Config& c, const std::string& needle) {
    try {
      (void)t.specialize(c);
      FAIL() << "accepted " << c.to_string();
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  expect_throw(Config{{"N", std::int64_t{3}}, {"FAST", true}, {"UNROLL", std::int64_t{1}}}, "N");
  expect_throw(Config{{"N", std::int64_t{1}}, {"FAST", true}}, "UNROLL");
  expect_throw(Config{{"N", std::int64_t{4}}, {"FAST", true}, {"UNROLL", std::int64_t{4}}},
               "N*UNROLL<=8");
}

}  // namespace
}  // namespace kiln
