// Which outputs are right, when the reference is another config. The
// default config is measured like every other config (in a worker, under a
// deadline), so its outputs arrive in the stream of measurements, maybe
// after others; until then the others wait here. When the default cannot
// give a reference (it failed, hung, did not compile, or the kernel's early
// prune removed it), the largest group of configs whose outputs agree
// within tolerance becomes the reference instead, and when no group stands
// out nothing is claimed: the report says "none".
#pragma once

#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "kiln/tuner/compare.hpp"
#include "kiln/tuner/tuner.hpp"
#include "measure.hpp"

namespace kiln::internal {

class OutputJudge {
 public:
  // `tolerances`: per output name. `default_unavailable`: why the default
  // config will not be measured (pruned), so consensus decides from the start.
  OutputJudge(Config default_config, std::map<std::string, Tolerance> tolerances,
              std::optional<std::string> default_unavailable = std::nullopt);

  // Every finished measurement comes here once, with the outputs of its
  // checked run when it ran (null when it failed before). Thread-safe.
  void observe(const Measurement& m, Outputs* outputs);

  // Configs known to be wrong so far: Config::key() -> the evidence.
  std::map<std::string, std::string> wrong() const;
  // Whether every config observed so far has its verdict in wrong(): the
  // default's outputs are the reference and have landed.
  bool settled() const;

  // Settles the configs still waiting (consensus when the default gave no
  // reference) and says which reference was used. Call once, at the end.
  ReferenceReport finish();

 private:
  struct Group {
    Outputs representative;  // the first member's outputs
    std::vector<std::string> members;
  };
  enum class State { kWaiting, kDefault, kConsensus };

  [[nodiscard]] Status disagreement(const Outputs& got, const Outputs& want) const;
  void to_consensus_locked(std::string why);
  void cluster_locked(const std::string& config, Outputs outputs);

  mutable std::mutex mutex_;
  const Config default_;
  const std::map<std::string, Tolerance> tolerances_;
  State state_ = State::kWaiting;
  std::string default_failure_;  // why the default gave no reference
  Outputs reference_;
  // Healthy configs measured before the default: compared when it lands.
  std::vector<std::pair<std::string, Outputs>> pending_;
  std::vector<Group> groups_;
  std::map<std::string, std::string> wrong_;
};

// Marks the configs in `wrong` (still ok in `measurements`) as kWrongResult
// with their evidence, and moves them from benchmarked to failed in `stats`.
void apply_verdicts(const std::map<std::string, std::string>& wrong,
                    std::vector<Measurement>& measurements, KernelStats& stats);

}  // namespace kiln::internal
