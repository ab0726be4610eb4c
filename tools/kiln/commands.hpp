// Each subcommand of `kiln` registers itself on the app and sets `exit_code`
// when it runs. Adding a subcommand: one file here plus one line in main.cpp.
#pragma once

#include <CLI/CLI.hpp>

namespace kiln::tool {

void add_info_command(CLI::App& app, int& exit_code);
void add_cache_command(CLI::App& app, int& exit_code);
void add_cache_remote_command(CLI::App& cache, int& exit_code);
void add_compile_command(CLI::App& app, int& exit_code);
void add_bench_command(CLI::App& app, int& exit_code);
void add_tune_command(CLI::App& app, int& exit_code);
void add_kernels_command(CLI::App& app, int& exit_code);
// `kiln bench tune`, under the bench group (cmd_bench_tune.cpp).
void add_bench_tune_command(CLI::App& bench, int& exit_code);
void add_bench_gemm_command(CLI::App& bench, int& exit_code);
void add_bench_rows_command(CLI::App& bench, int& exit_code);

}  // namespace kiln::tool
