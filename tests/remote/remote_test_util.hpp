// What the remote-tier tests share: a private cache directory per
// "machine", and `kiln tune` of a small CPU GEMM run as a real process
// against a server, with its JSON report and warnings.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "deadline_run.hpp"
#include "kiln/cache/remote_cache.hpp"
#include "redis_server.hpp"
#include "skip.hpp"

namespace kiln::testing {

// A directory removed with the object: one machine's cache, or a secret file.
class Machine {
 public:
  Machine() {
    char dir[] = "/tmp/kiln-machine-XXXXXX";
    dir_ = ::mkdtemp(dir);
  }
  ~Machine() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  Machine(const Machine&) = delete;
  Machine& operator=(const Machine&) = delete;
  const std::filesystem::path& dir() const { return dir_; }
  // Writes `text` into a file of this directory and returns its path.
  std::string file(const std::string& name, const std::string& text) const {
    const auto path = dir_ / name;
    std::ofstream(path) << text;
    return path.string();
  }

 private:
  std::filesystem::path dir_;
};

struct TuneRun {
  DeadlineRun run;
  nlohmann::json report;  // null when stdout was not JSON
  int compiled() const { return report.is_null() ? -1 : report["stats"]["compiled"].get<int>(); }
  // Warning lines on stderr (those containing `about`, when given).
  int warnings(const std::string& about = "") const {
    int n = 0;
    std::size_t start = 0;
    while (start < run.err.size()) {
      std::size_t end = run.err.find('\n', start);
      if (end == std::string::npos) end = run.err.size();
      const std::string line = run.err.substr(start, end - start);
      if (line.find("[kiln warn]") != std::string::npos &&
          (about.empty() || line.find(about) != std::string::npos))
        ++n;
      start = end + 1;
    }
    return n;
  }
};

// `kiln tune` of the shipped RMSNorm (4 configs) with cache `machine` and
// environment `env`. Not the GEMM: the tier is what is checked, and the
// RMSNorm's configs compile about 4x faster (the ASan suite ran these
// tests at 19-28 s each with the GEMM).
inline TuneRun tune_on(const Machine& machine, const std::string& env,
                       const std::string& shape = "rows=8,hidden=64") {
  TuneRun t;
  t.run = run_with_deadline(
      "env KILN_CACHE_DIR=" + machine.dir().string() + " KILN_RANK= RANK= LOCAL_RANK= " + env +
          " " KILN_CLI_PATH " tune --kernel fused_add_rmsnorm --backend cpu --shape " + shape +
          " --max-configs 4 --json",
      std::chrono::seconds(120));
  t.report = nlohmann::json::parse(t.run.out, nullptr, false);
  if (t.report.is_discarded()) t.report = nullptr;
  return t;
}

// Skips the test unless a redis-server and a Kiln with the tier are here.
#define KILN_REQUIRE_REDIS()                                                 \
  do {                                                                       \
    if (!::kiln::remote_cache_built())                                       \
      KILN_SKIP(Skip::kHiredis) << "built without hiredis/OpenSSL";          \
    if (!::kiln::testing::have_redis_server())                               \
      KILN_SKIP(Skip::kRedisServer)                                          \
          << "redis-server is not installed (scripts/setup.sh installs it)"; \
  } while (0)

}  // namespace kiln::testing
