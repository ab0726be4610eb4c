// Scopes that steer choose_one() on the calling thread.
//
// TuningScope turns tuning on (or off) until it ends; given a cache path it
// opens that file (one per rank) at entry, serves and records decisions
// through it, and saves it at exit. Outside every tuning scope an op never
// tunes: it serves what is cached or takes its fallback.
//
// SkipScope names ops that take their fallback at once: nothing listed,
// compiled, profiled or written to any cache. Nested skip scopes take the
// union and restore the outer set when they end, normally or by an
// exception. Both are per thread: another thread's scopes never leak in,
// and each thread's decisions go to its own innermost scope's file.
//
//   kiln::TuningScope tuning(tuner, {.cache_path = "tactics.json"});
//   kiln::SkipScope skip({"attention", "moe_gemm"});
//   model.forward(batch);  // tunes every op but these two
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/device/device.hpp"

namespace kiln {

class TacticTuner;
class TuningCache;
class TuningFile;

struct TuningScopeOptions {
  bool tune = true;
  // Empty: decisions live in the tuner's memory (and its own cache, if any).
  std::filesystem::path cache_path;
  // The rank whose file is used: "tactics.json" becomes "tactics.rank3.json"
  // for rank 3. Unset: Options::rank (KILN_RANK, RANK, LOCAL_RANK).
  std::optional<int> rank;
  std::vector<std::string> skip;  // ops skipped inside this scope
  // An open cache used instead of cache_path: this thread's decisions are
  // served from and recorded into it. The caller owns it, attaches it to
  // the tuner and saves it (the Python binding: one cache per
  // kiln.tuning() block, whichever thread or task it runs on).
  TuningCache* borrowed_cache = nullptr;
};

class TuningScope {
 public:
  // Tuning on or off on this thread, no cache file.
  explicit TuningScope(bool tune = true);
  // With a cache file: opened now (a malformed file is logged and treated
  // as empty, never fatal) and attached to `tuner` until the scope ends.
  // `tuner` must outlive the scope (declare it first).
  TuningScope(TacticTuner& tuner, TuningScopeOptions options);
  // Saves the file (a failure is logged), detaches it, restores the outer
  // scope's tuning switch and skip set.
  ~TuningScope();
  TuningScope(const TuningScope&) = delete;
  TuningScope& operator=(const TuningScope&) = delete;

  // Saves now; the error (naming the file) when the disk refuses.
  Status save();
  // The file this scope reads and writes (empty without a cache path).
  const std::filesystem::path& cache_file() const;

  // Whether choose_one() may tune on this thread now.
  static bool tuning();

 private:
  std::optional<bool> outer_tuning_;
  std::set<std::string, std::less<>> outer_skip_;
  TuningCache* outer_cache_ = nullptr;
  std::unique_ptr<TuningFile> file_;
};

class SkipScope {
 public:
  explicit SkipScope(std::string op);
  explicit SkipScope(std::vector<std::string> ops);
  SkipScope(std::initializer_list<std::string> ops);
  ~SkipScope();
  SkipScope(const SkipScope&) = delete;
  SkipScope& operator=(const SkipScope&) = delete;

  // Whether `op` is skipped on this thread now.
  static bool skipped(std::string_view op);
  // This thread's skip set, sorted.
  static std::vector<std::string> current();

 private:
  std::set<std::string, std::less<>> outer_;
};

// "tactics.json" for rank -1, "tactics.rank3.json" for rank 3.
std::filesystem::path rank_file(const std::filesystem::path& path, int rank);

}  // namespace kiln
