// Runs a shell command line in a child process and returns its stdout and
// how it ended: the one way the tests start the `kiln` executable and the
// other programs they drive. Environment prefixes (`env A=B ...`) and
// redirections (`2>&1`, `2>FILE`) belong in the command line.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

namespace kiln::testing {

struct CommandRun {
  int exit_code = -1;  // -1: it could not start, or a signal ended it
  std::string out;     // everything it wrote to stdout
  nlohmann::json json() const { return nlohmann::json::parse(out); }  // throws when not JSON
};

inline CommandRun run_command(const std::string& command) {
  CommandRun run;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (!pipe) return run;
  char buffer[4096];
  std::size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) run.out.append(buffer, n);
  const int status = ::pclose(pipe);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

}  // namespace kiln::testing
