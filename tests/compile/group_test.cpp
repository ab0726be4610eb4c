// Grouping specializations into compile units, and the artifact key's
// independence from grouping. No compiler runs here.
#include <gtest/gtest.h>

#include "kiln/compile/compile_engine.hpp"
#include "test_kernels.hpp"

namespace kiln {
namespace {

std::vector<std::size_t> sizes(const std::vector<CompileUnit>& units) {
  std::vector<std::size_t> out;
  for (const auto& u : units) out.push_back(u.specializations.size());
  return out;
}

std::vector<Specialization> specs(const KernelTemplate& t, int n) {
  std::vector<Specialization> out;
  for (int i = 0; i < n; ++i) {
    Specialization s = t.specialize(Config{{"N", std::int64_t{1}}});
    s.entry = "scale<" + std::to_string(i) + ">";
    out.push_back(s);
  }
  return out;
}

TEST(Group, BalancesUnitsAndKeepsOrder) {
  auto t = test::scale_kernel();
  auto units = group(t, specs(t, 10), GroupOptions{8, "sm_80", BinaryFormat::kCubin});
  EXPECT_EQ(sizes(units), (std::vector<std::size_t>{5, 5}));
  EXPECT_EQ(units[0].specializations[0].entry, "scale<0>");
  EXPECT_EQ(units[1].specializations[4].entry, "scale<9>");
  EXPECT_EQ(units[0].arch, "sm_80");
  EXPECT_EQ(units[0].source, t.source);
  EXPECT_EQ(sizes(group(t, specs(t, 23), GroupOptions{8, "sm_90a", BinaryFormat::kCubin})),
            (std::vector<std::size_t>{8, 8, 7}));
}

TEST(Group, RoundsTheUnitCountToTheWorkers) {
  auto t = test::scale_kernel();
  GroupOptions o{8, "sm_90a", BinaryFormat::kCubin, 2};
  EXPECT_EQ(sizes(group(t, specs(t, 23), o)), (std::vector<std::size_t>{6, 6, 6, 5}));
  o.workers = 16;
  EXPECT_EQ(group(t, specs(t, 5), o).size(), 5u) << "never more units than specializations";
}

TEST(Group, DifferentDefinesNeverShareAProgram) {
  auto t = test::scale_kernel();
  auto all = specs(t, 4);
  all[1].defines["KILN_X"] = "1";
  all[3].defines["KILN_X"] = "1";
  auto units = group(t, all, GroupOptions{8, "sm_80", BinaryFormat::kCubin});
  ASSERT_EQ(units.size(), 2u);
  EXPECT_EQ(sizes(units), (std::vector<std::size_t>{2, 2}));
  EXPECT_TRUE(units[0].options.empty());
  EXPECT_EQ(units[1].options, (std::vector<std::string>{"-DKILN_X=1"}));
}

TEST(Group, MisuseThrows) {
  auto t = test::scale_kernel();
  EXPECT_THROW(group(t, specs(t, 2), GroupOptions{8, "", BinaryFormat::kCubin}), Error);
  auto foreign = specs(t, 1);
  foreign[0].kernel = "other";
  EXPECT_THROW(group(t, foreign, GroupOptions{8, "sm_80", BinaryFormat::kCubin}), Error);
}

TEST(Group, DefaultGroupSizeComesFromOptions) {
  Options o;
  EXPECT_EQ(resolve_group_size(0, o), kDefaultGroupSize);
  o.group_size = 3;
  EXPECT_EQ(resolve_group_size(0, o), 3u);
  EXPECT_EQ(resolve_group_size(5, o), 5u);
}

}  // namespace
}  // namespace kiln
