// Value types of the compile stage: JSON round trips and the cancel token.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "kiln/compile/compile.hpp"
#include "test_kernels.hpp"

namespace kiln {
namespace {

TEST(CompileTypes, FormatNamesRoundTrip) {
  for (auto f : {BinaryFormat::kCubin, BinaryFormat::kPtx, BinaryFormat::kCpuObject}) {
    EXPECT_EQ(parse_binary_format(binary_format_name(f)), f);
  }
  EXPECT_FALSE(parse_binary_format("elf").has_value());
}

TEST(CompileTypes, UnitJsonRoundTripsEveryField) {
  auto t = test::scale_kernel();
  CompileUnit u = test::single_unit(t, 4, "sm_90a");
  u.headers.push_back({"kiln/extra.cuh", "#pragma once\n"});
  u.include_dirs.push_back("/opt/include");
  u.specializations[0].defines["KILN_X"] = "2";
  u.specializations[0].options.push_back("-std=c++20");
  CompileUnit back = CompileUnit::from_json(nlohmann::json::parse(u.to_json().dump()));
  EXPECT_EQ(back.kernel, u.kernel);
  EXPECT_EQ(back.source, u.source);
  EXPECT_EQ(back.headers, u.headers);
  EXPECT_EQ(back.include_dirs, u.include_dirs);
  EXPECT_EQ(back.options, u.options);
  EXPECT_EQ(back.arch, "sm_90a");
  EXPECT_EQ(back.format, BinaryFormat::kCubin);
  EXPECT_EQ(back.specializations, u.specializations);
  EXPECT_THROW(CompileUnit::from_json(nlohmann::json{{"kernel", 1}}), Error);
}

TEST(CancelToken, CopiesShareStateAndChildrenFollowParents) {
  CancelToken parent;
  CancelToken copy = parent;
  CancelToken child = CancelToken::child_of(parent);
  EXPECT_FALSE(child.cancelled());
  child.cancel();
  EXPECT_TRUE(child.cancelled());
  EXPECT_FALSE(parent.cancelled()) << "a child never cancels its parent";
  CancelToken sibling = CancelToken::child_of(parent);
  copy.cancel();
  EXPECT_TRUE(parent.cancelled());
  EXPECT_TRUE(sibling.cancelled());
}

TEST(CancelToken, DeadlineCancels) {
  CancelToken t;
  t.set_deadline(CancelToken::Clock::now() + std::chrono::hours(1));
  EXPECT_FALSE(t.cancelled());
  t.set_deadline(CancelToken::Clock::now() - std::chrono::milliseconds(1));
  EXPECT_TRUE(t.cancelled());
}

}  // namespace
}  // namespace kiln
