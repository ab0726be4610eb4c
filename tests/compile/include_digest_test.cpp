// Headers on disk enter artifact keys by content: editing one changes the
// key, so a binary built from the old header is never served.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "kiln/compile/compile_engine.hpp"

namespace kiln {
namespace {

// Only the key is computed here: name and code options are what it reads.
class KeyOnlyCompiler final : public Compiler {
 public:
  std::string name() const override { return "key-only"; }
  std::string version() const override { return "1"; }
  std::vector<std::string> code_options() const override { return {}; }
  Result<CompiledProgram> compile(const CompileUnit&, const CancelToken&) override {
    return make_error(ErrorCode::kUnavailable, "key-only compiler does not compile");
  }
};

void write(const std::filesystem::path& path, const std::string& text) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

TEST(IncludeDigest, EditingAHeaderOnDiskChangesTheKey) {
  auto dir =
      std::filesystem::temp_directory_path() / ("kiln_incdigest_" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  write(dir / "inc" / "tile.h", "#define TILE 64\n");
  write(dir / "inc" / "sub" / "util.h", "inline int f() { return 1; }\n");

  CompileUnit unit;
  unit.kernel = "k";
  unit.source = "#include \"tile.h\"\n";
  unit.include_dirs = {(dir / "inc").string()};
  unit.arch = "sm_90a";
  Specialization s;
  s.kernel = "k";
  s.entry = "k<1>";
  unit.specializations = {s};
  KeyOnlyCompiler compiler;
  CompileContext context;

  Hash128 before = specialization_key(context, compiler, unit, 0);
  EXPECT_EQ(before, specialization_key(context, compiler, unit, 0)) << "stable";

  // Same size, new content, mtime moved on: a different key.
  write(dir / "inc" / "tile.h", "#define TILE 32\n");
  std::filesystem::last_write_time(
      dir / "inc" / "tile.h",
      std::filesystem::file_time_type::clock::now() + std::chrono::seconds(5));
  Hash128 edited = specialization_key(context, compiler, unit, 0);
  EXPECT_NE(before, edited);

  // A header deeper in the tree counts too; so does a new file.
  write(dir / "inc" / "sub" / "util.h", "inline int f() { return 2; }\n");
  std::filesystem::last_write_time(
      dir / "inc" / "sub" / "util.h",
      std::filesystem::file_time_type::clock::now() + std::chrono::seconds(10));
  Hash128 deeper = specialization_key(context, compiler, unit, 0);
  EXPECT_NE(edited, deeper);
  write(dir / "inc" / "new.h", "\n");
  EXPECT_NE(deeper, specialization_key(context, compiler, unit, 0));

  // A file outside the include dirs does not.
  Hash128 now = specialization_key(context, compiler, unit, 0);
  write(dir / "elsewhere.h", "x\n");
  EXPECT_EQ(now, specialization_key(context, compiler, unit, 0));
  std::filesystem::remove_all(dir);
}

TEST(IncludeDigest, MissingDirectoryStillKeys) {
  CompileUnit unit;
  unit.kernel = "k";
  unit.source = "x";
  unit.include_dirs = {"/nonexistent/kiln/include"};
  unit.arch = "sm_80";
  Specialization s;
  s.kernel = "k";
  s.entry = "k";
  unit.specializations = {s};
  KeyOnlyCompiler compiler;
  CompileUnit other = unit;
  other.include_dirs = {"/nonexistent/kiln/include2"};
  EXPECT_NE(specialization_key({}, compiler, unit, 0), specialization_key({}, compiler, other, 0));
}

}  // namespace
}  // namespace kiln
