// failure_gist: the line of a failure a person reads first, on one line.
#include <gtest/gtest.h>

#include "kiln/core/error.hpp"

namespace kiln {
namespace {

// A compile failure as the tuner describes it: the message, then details,
// the compiler's log last. A plain cut ended inside the details, before the
// error the user needs.
TEST(FailureGist, AFailedCompileLeadsWithTheCompilersFirstError) {
  ErrorInfo info{ErrorCode::kCompileFailed,
                 "Clang failed to compile example_transpose x1 host cpu_object",
                 {{"arch", "host"},
                  {"config", "STAGED=false,TILE=16"},
                  {"log",
                   "In file included from unit.cpp:2:\n"
                   "example_transpose.cpp:14:3: error: unknown type name 'this'\n"
                   "example_transpose.cpp:20:1: error: a second one"}}};
  const std::string gist = failure_gist(info.describe(), 300);
  EXPECT_EQ(gist,
            "example_transpose.cpp:14:3: error: unknown type name 'this' (Clang failed "
            "to compile example_transpose x1 host cpu_object)");
  const std::string cut = failure_gist(info.describe(), 60);
  EXPECT_EQ(cut.size(), 60u);
  EXPECT_EQ(cut.substr(57), "...");
}

TEST(FailureGist, WithoutAnErrorLineItIsTheMessageOnOneLine) {
  EXPECT_EQ(failure_gist("the kernel took longer than 10 s\n  config: B=1", 100),
            "the kernel took longer than 10 s");
  // "error:" in the message itself is the message, not a line to promote.
  EXPECT_EQ(failure_gist("launch error: out of resources\n  grid: 1", 100),
            "launch error: out of resources");
  EXPECT_EQ(failure_gist("", 10), "");
}

}  // namespace
}  // namespace kiln
