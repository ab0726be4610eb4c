// kiln-lab: the research commands on recorded spaces (replayed searches,
// replayed tunings), apart from `kiln`, the product's command. Usage errors
// exit with 2.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <iostream>

#include "kiln/core/fingerprint.hpp"
#include "lab_commands.hpp"

int main(int argc, char** argv) {
  CLI::App app{"Kiln's lab: search strategies and tunings replayed on recorded spaces", "kiln-lab"};
  app.set_version_flag("--version", std::string("kiln-lab ") + kiln::kiln_version());
  app.require_subcommand(1);
  int exit_code = 0;
  CLI::App* bench = app.add_subcommand("bench", "Benchmarks of Kiln's search on recorded spaces");
  bench->require_subcommand(1);
  kiln::tool::add_bench_search_command(*bench, exit_code);
  kiln::tool::add_tune_recorded_command(app, exit_code);
  kiln::tool::add_lab_info_command(app, exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // Help, --version and a flag that printed what was asked exit 0; a
    // usage error is printed with the usage and exits 2.
    return app.exit(e) == 0 ? 0 : 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kiln-lab: %s\n", e.what());
    return 1;
  }
  // A JSON document lost on its way to stdout (a full disk) fails the run.
  std::cout.flush();
  errno = 0;
  const bool lost = std::fflush(stdout) != 0 || std::ferror(stdout) || !std::cout;
  if (lost) {
    std::fprintf(stderr, "kiln-lab: writing the output to stdout failed (%s)\n",
                 errno ? std::strerror(errno) : "an error of the stream");
    if (exit_code == 0) exit_code = 1;
  }
  return exit_code;
}
