// The docs' C++ snippets are compiled by the kiln_doc_snippets target
// (tests/docs/CMakeLists.txt), which this test depends on; here they are
// counted, so a docs change that loses every fence, or an extractor that
// stops finding them, fails instead of passing silently.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

TEST(DocSnippets, EveryFencedSnippetIsCompiled) {
  std::ifstream in(KILN_DOC_SNIPPETS_CPP);
  ASSERT_TRUE(in) << KILN_DOC_SNIPPETS_CPP;
  std::stringstream text;
  text << in.rdbuf();
  int count = 0;
  for (std::size_t at = text.str().find("\nnamespace snippet_"); at != std::string::npos;
       at = text.str().find("\nnamespace snippet_", at + 1)) {
    ++count;
  }
  EXPECT_GE(count, 9) << "docs/frameworks.md alone has nine C++ snippets";
  EXPECT_NE(text.str().find("docs/frameworks.md"), std::string::npos);
}
