// kiln: the command-line face of Kiln. Usage errors exit with 2.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <iostream>

#include "commands.hpp"
#include "kiln/cache/remote_cache.hpp"
#include "kiln/core/fingerprint.hpp"
#include "kiln/process/worker_process.hpp"

int main(int argc, char** argv) {
  // SIGTERM or Ctrl-C ends the worker processes (and what they started) with
  // kiln; SIGKILL does too, through PR_SET_PDEATHSIG (include/kiln/process/worker_process.hpp).
  kiln::install_worker_signal_handlers();
  CLI::App app{"Kiln: JIT kernel generation with an integrated autotuner", "kiln"};
  app.set_version_flag("--version", std::string("kiln ") + kiln::kiln_version());
  app.require_subcommand(1);
  int exit_code = 0;
  kiln::tool::add_info_command(app, exit_code);
  kiln::tool::add_cache_command(app, exit_code);
  kiln::tool::add_compile_command(app, exit_code);
  kiln::tool::add_bench_command(app, exit_code);
  kiln::tool::add_tune_command(app, exit_code);
  kiln::tool::add_kernels_command(app, exit_code);
  // CLI11 reports an unknown subcommand word, at any level (`kiln bogus`,
  // `kiln bench bogus`, `kiln cache remote bogus`), as "a subcommand is
  // required"; name the word and list what that level has instead.
  CLI::App* level = &app;
  std::string path = "kiln";
  for (int i = 1; i < argc && argv[i][0] != '-'; ++i) {
    const auto subs = level->get_subcommands([](CLI::App*) { return true; });
    if (subs.empty() || level->get_require_subcommand_min() == 0) break;
    CLI::App* next = nullptr;
    std::string names;
    for (CLI::App* sub : subs) {
      if (sub->check_name(argv[i])) next = sub;
      names += (names.empty() ? "" : ", ") + sub->get_name();
    }
    if (!next) {
      std::fprintf(stderr, "%s: unknown subcommand '%s': use one of %s (--help says more)\n",
                   path.c_str(), argv[i], names.c_str());
      return 2;
    }
    level = next;
    path += std::string(" ") + argv[i];
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::Success& e) {  // an option that printed what was asked (--search list)
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);  // prints the message and the usage
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kiln: %s\n", e.what());
    return 1;
  }
  // Writes queued for the remote cache tier go out before kiln exits, each
  // wait bounded (KILN_REMOTE_CACHE_FLUSH_MS).
  if (kiln::RemoteCache* remote = kiln::RemoteCache::global())
    remote->flush(remote->config().flush_timeout);
  // A report or JSON document that could not be written (stdout on a full
  // disk, > /dev/full) was lost while kiln exited 0.
  std::cout.flush();
  errno = 0;
  if (std::fflush(stdout) != 0 || std::ferror(stdout) || !std::cout) {
    std::fprintf(stderr,
                 "kiln: writing the output to stdout failed%s%s%s: it is incomplete; check "
                 "where stdout goes (a full disk, a closed pipe) or redirect it elsewhere\n",
                 errno ? " (" : "", errno ? std::strerror(errno) : "", errno ? ")" : "");
    if (exit_code == 0) exit_code = 1;
  }
  return exit_code;
}
