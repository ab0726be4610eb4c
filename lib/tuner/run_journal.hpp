// One search's side of the tuning journal (kiln/cache/tuning_journal.hpp):
// the measurements an earlier run of the same key kept, which land at once
// instead of being measured again (the pipeline's Intake), and this run's
// own, kept as each lands. Thread-safe: results land on worker threads.
//
// What is kept is final: a failure that is the config's own
// (remembered_outcome; a config the run cancelled is not), and a time
// whose outputs were judged (when they are judged against the default's,
// a result waits for that verdict). The default config is measured again
// whenever other outputs are judged against it: it is their reference.
#pragma once

#include <cstddef>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "kiln/cache/tuning_journal.hpp"
#include "kiln/tuner/measurement.hpp"
#include "output_judge.hpp"

namespace kiln::internal {

class RunJournal {
 public:
  // Reads what `journal` kept for `key`, leaving out `reference` (the
  // default, when outputs are judged against it). `write`: this run keeps
  // its own measurements (off when it may not write the cache).
  RunJournal(TuningJournal journal, FailureKey key, bool write,
             const std::optional<Config>& reference);

  // The earlier run's measurement of `config`, counted as resumed; nullopt
  // when it has none (or it was taken already: a config measured twice in
  // one search, as the finalists are, is measured anew).
  std::optional<Measurement> take(const Config& config);
  // Hands what take() gave to `record` (the run's ledger), one at a time:
  // those a landing brings (a search refilled as results land) wait in
  // line here rather than recurse.
  void land(std::vector<Measurement> earlier, const std::function<void(Measurement)>& record);
  // A result of this run landed (`judge`: its outputs' judge, or null).
  void landed(const Measurement& m, const OutputJudge* judge);
  // The search is over with `measurements` (verdicts final). A finished
  // search removes the journal; one cut short keeps what still waited for
  // a verdict.
  void close(const std::vector<Measurement>& measurements, bool finished);

  // Configs taken from the earlier run, by Config::key().
  std::set<std::string> resumed() const;

 private:
  void keep(const std::vector<Measurement>& ms);

  const TuningJournal journal_;
  const FailureKey key_;
  const bool write_;
  mutable std::mutex mutex_;
  std::map<std::string, Measurement> earlier_;  // by Config::key()
  std::set<std::string> resumed_;
  std::vector<Measurement> waiting_;  // ok, its verdict not known yet
  std::deque<Measurement> backlog_;   // taken, not landed yet
  bool landing_ = false;
};

}  // namespace kiln::internal
