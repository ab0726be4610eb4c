// docs/distributed.md's shell snippets for the remote tier, run in order
// against a real server: the docs cannot drift from the commands.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "remote_test_util.hpp"

namespace kiln::testing {
namespace {

// The ```sh blocks of the "## A shared cache on Redis" section.
std::vector<std::string> redis_section_snippets() {
  std::ifstream in(KILN_DOCS_DIR "/distributed.md");
  std::stringstream text;
  text << in.rdbuf();
  const std::string doc = text.str();
  const auto start = doc.find("## A shared cache on Redis");
  auto end = doc.find("\n## ", start + 1);
  if (end == std::string::npos) end = doc.size();
  const std::string section = doc.substr(start, end - start);
  std::vector<std::string> blocks;
  for (std::size_t at = section.find("```sh\n"); at != std::string::npos;
       at = section.find("```sh\n", at + 1)) {
    const auto close = section.find("\n```", at + 6);
    blocks.push_back(section.substr(at + 6, close - at - 6));
  }
  return blocks;
}

void replace_all(std::string& text, const std::string& from, const std::string& to) {
  for (std::size_t at = text.find(from); at != std::string::npos;
       at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
}

TEST(RemoteDocs, TheSnippetsRunAgainstARealServer) {
  KILN_REQUIRE_REDIS();
  RedisServer server;
  Machine ci, laptop;
  const std::vector<std::string> blocks = redis_section_snippets();
  ASSERT_EQ(blocks.size(), 3u) << "the doc's snippets moved: update this test";
  const std::string bin = std::filesystem::path(KILN_CLI_PATH).parent_path().string();
  // The CI machine, then the developer's, then the maintenance commands.
  const Machine* machines[] = {&ci, &laptop, &ci};
  ci.file(".kiln-team-key", "team key\n");  // $HOME/.kiln-team-key in the snippets
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    std::string script = blocks[i];
    replace_all(script, "redis://cache.internal:6379", server.url());
    ci.file("script.sh", "set -euo pipefail\n" + script + "\n");
    DeadlineRun r = run_with_deadline(
        "env HOME=" + ci.dir().string() + " KILN_CACHE_DIR=" + machines[i]->dir().string() +
        " PATH=" + bin + ":$PATH" + " KILN_RANK= RANK= LOCAL_RANK= bash " +
        (ci.dir() / "script.sh").string());
    EXPECT_EQ(r.exit_code, 0) << "snippet " << i << ":\n" << script << "\n" << r.out << r.err;
  }
}

}  // namespace
}  // namespace kiln::testing
