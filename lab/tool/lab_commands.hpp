// Each subcommand of `kiln-lab` registers itself on the app and sets
// `exit_code` when it runs (as `kiln`'s do, tools/kiln/commands.hpp).
#pragma once

#include <CLI/CLI.hpp>

namespace kiln::tool {

// kiln-lab bench search (cmd_bench_search.cpp), under the bench group.
void add_bench_search_command(CLI::App& bench, int& exit_code);
// kiln-lab tune --recorded FILE (cmd_tune_recorded.cpp).
void add_tune_recorded_command(CLI::App& app, int& exit_code);
// kiln-lab info: what this build of the lab reads (cmd_lab_info.cpp).
void add_lab_info_command(CLI::App& app, int& exit_code);

}  // namespace kiln::tool
