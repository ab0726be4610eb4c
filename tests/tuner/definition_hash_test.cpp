// The definition hash (kiln/tuner/tuner.hpp): every part of a kernel that changes
// what it computes or how fast changes the hash, so a tuning record is only
// served to the kernel it was measured for; what does not (the description)
// leaves it alone, so an unchanged kernel starts warm.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "kiln/tuner/tuner.hpp"

namespace kiln {
namespace {

TunableKernel base_kernel() {
  TunableKernel k;
  k.tmpl.name = "scale";
  k.tmpl.description = "y = a * x";
  k.tmpl.source = "template <int B> void scale(float* y) {}\n";
  k.tmpl.entry = "scale<{B}>";
  k.tmpl.defines = {{"KILN_UNROLL", "{U}"}};
  k.tmpl.options = {"-O3"};
  k.tmpl.headers = {{"scale_common.h", "#define SCALE 2\n"}};
  k.tmpl.space.param("B", {64, 128}).param("U", {1, 2});
  k.tmpl.space.constraint("B*U<=256",
                          [](const Config& c) { return c.get_int("B") * c.get_int("U") <= 256; });
  k.outputs = {"y"};
  return k;
}

struct Edit {
  const char* what;
  std::function<void(TunableKernel&)> apply;
};

TEST(DefinitionHash, EveryPartOfTheKernelChangesIt) {
  const Hash128 base = definition_hash(base_kernel());
  EXPECT_EQ(base, definition_hash(base_kernel())) << "the same kernel hashes the same";
  const std::vector<Edit> edits = {
      {"source (a comment)", [](TunableKernel& k) { k.tmpl.source += "// faster now\n"; }},
      {"entry", [](TunableKernel& k) { k.tmpl.entry = "scale<{B}, {U}>"; }},
      {"define value", [](TunableKernel& k) { k.tmpl.defines["KILN_UNROLL"] = "{U}+1"; }},
      {"define added", [](TunableKernel& k) { k.tmpl.defines["KILN_FAST"] = "1"; }},
      {"option", [](TunableKernel& k) { k.tmpl.options = {"-O2"}; }},
      {"option moved to a define",
       [](TunableKernel& k) {
         k.tmpl.options.clear();
         k.tmpl.defines["-O3"] = "";
       }},
      {"header content", [](TunableKernel& k) { k.tmpl.headers[0].content = "#define SCALE 3\n"; }},
      {"header name", [](TunableKernel& k) { k.tmpl.headers[0].name = "other.h"; }},
      {"include dir", [](TunableKernel& k) { k.tmpl.include_dirs = {"/nonexistent/kiln"}; }},
      {"space parameter added", [](TunableKernel& k) { k.tmpl.space.param("W", {1}); }},
      {"constraint",
       [](TunableKernel& k) {
         k.tmpl.space.constraint("B>=64", [](const Config& c) { return c.get_int("B") >= 64; });
       }},
      {"default",
       [](TunableKernel& k) {
         k.tmpl.space.default_config(Config{{"B", std::int64_t{128}}, {"U", std::int64_t{1}}});
       }},
      {"outputs",
       [](TunableKernel& k) {
         k.outputs = {"y", "x"};
       }},
      {"restore_value", [](TunableKernel& k) { k.restore_value = {"y"}; }},
      {"reset_to_zero", [](TunableKernel& k) { k.reset_to_zero = {"y"}; }},
      {"top_k", [](TunableKernel& k) { k.top_k = 4; }},
      {"version (a launch lambda changed)", [](TunableKernel& k) { k.version = "2"; }},
  };
  for (const Edit& e : edits) {
    TunableKernel k = base_kernel();
    e.apply(k);
    EXPECT_NE(definition_hash(k), base) << e.what;
  }
  // The space's values in another order enumerate differently: another kernel.
  TunableKernel reordered = base_kernel();
  reordered.tmpl.space = ConfigSpace().param("B", {128, 64}).param("U", {1, 2});
  EXPECT_NE(definition_hash(reordered), base);
}

TEST(DefinitionHash, WhatDoesNotChangeTheKernelLeavesItAlone) {
  const Hash128 base = definition_hash(base_kernel());
  TunableKernel k = base_kernel();
  k.tmpl.description = "scales a vector";
  // The launch rule is code: only `version` speaks for it.
  k.launch = [](const Config&, const ArgList&) { return LaunchGeometry{}; };
  EXPECT_EQ(definition_hash(k), base);
}

// Headers read from an include directory count by content, as they do in
// the artifact key: an edited header on disk is a changed kernel.
TEST(DefinitionHash, AHeaderEditedOnDiskChangesIt) {
  std::string pattern = (std::filesystem::temp_directory_path() / "kiln-defhash-XXXXXX").string();
  ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
  const std::filesystem::path dir = pattern;
  std::ofstream(dir / "tile.h") << "#define TILE 16\n";
  TunableKernel k = base_kernel();
  k.tmpl.include_dirs = {dir.string()};
  const Hash128 before = definition_hash(k);
  EXPECT_EQ(definition_hash(k), before);
  std::ofstream(dir / "tile.h", std::ios::trunc) << "#define TILE 32 /* tuned */\n";
  EXPECT_NE(definition_hash(k), before);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace kiln
