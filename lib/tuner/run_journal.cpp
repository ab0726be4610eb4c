#include "run_journal.hpp"

#include <nlohmann/json.hpp>

#include "kiln/core/log.hpp"

namespace kiln::internal {

namespace {

// Whether a result is the config's own at the moment it lands. A crash or
// a hang is not kept: the interruption that ends a run (Ctrl-C reaches the
// workers too) may be what caused it, so it is measured again.
bool keepable(const Measurement& m) {
  switch (m.outcome) {
    case Outcome::kOk:
    case Outcome::kCompileFailed:
    case Outcome::kLoadFailed:
    case Outcome::kLaunchFailed:
    case Outcome::kWrongResult:
      return true;
    default:
      return false;
  }
}

}  // namespace

RunJournal::RunJournal(TuningJournal journal, FailureKey key, bool write,
                       const std::optional<Config>& reference)
    : journal_(std::move(journal)), key_(std::move(key)), write_(write && journal_.writable()) {
  for (const nlohmann::json& entry : journal_.read(key_)) {
    try {
      Measurement m = Measurement::from_json(entry);
      if (reference && m.config == *reference) continue;
      earlier_.insert_or_assign(m.config.key(), std::move(m));
    } catch (const std::exception& e) {
      KILN_LOG(kWarn) << "tuning journal " << journal_.file_for(key_).string()
                      << ": an entry is skipped (" << e.what() << "); its config is measured again";
    }
  }
}

std::optional<Measurement> RunJournal::take(const Config& config) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = earlier_.find(config.key());
  if (it == earlier_.end()) return std::nullopt;
  Measurement m = std::move(it->second);
  earlier_.erase(it);
  resumed_.insert(m.config.key());
  return m;
}

void RunJournal::land(std::vector<Measurement> earlier,
                      const std::function<void(Measurement)>& record) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto& m : earlier) backlog_.push_back(std::move(m));
    if (landing_ || backlog_.empty()) return;
    landing_ = true;
  }
  while (true) {
    Measurement m;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (backlog_.empty()) {
        landing_ = false;
        return;
      }
      m = std::move(backlog_.front());
      backlog_.pop_front();
    }
    record(std::move(m));  // outside the lock: it lands, and may bring more
  }
}

void RunJournal::landed(const Measurement& m, const OutputJudge* judge) {
  if (!write_ || !keepable(m)) return;
  std::vector<Measurement> now;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (resumed_.count(m.config.key())) return;  // kept already, by the run it came from
    if (judge && m.ok()) {
      waiting_.push_back(m);
      if (!judge->settled()) return;
      // Every waiting result has its verdict now.
      now.swap(waiting_);
      KernelStats unused;
      apply_verdicts(judge->wrong(), now, unused);
    } else {
      now.push_back(m);
    }
  }
  keep(now);  // NOTES: file I/O outside the lock every landing result takes
}

void RunJournal::close(const std::vector<Measurement>& measurements, bool finished) {
  if (!write_) return;
  if (finished) {
    Status removed = journal_.remove(key_);
    if (!removed.ok()) KILN_LOG(kWarn) << "tuning journal: " << removed.error().describe();
    return;
  }
  std::set<std::string> waiting;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const Measurement& m : waiting_) waiting.insert(m.config.key());
    waiting_.clear();
  }
  std::vector<Measurement> settled;
  for (const Measurement& m : measurements)
    if (waiting.count(m.config.key()) && keepable(m)) settled.push_back(m);
  keep(settled);
}

std::set<std::string> RunJournal::resumed() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return resumed_;
}

void RunJournal::keep(const std::vector<Measurement>& ms) {
  for (const Measurement& m : ms) {
    Status kept = journal_.append(key_, m.to_json());
    if (!kept.ok()) {
      log_once(LogLevel::kWarn, "journal-write:" + journal_.file_for(key_).string(),
               "tuning journal not kept (a rerun measures everything again): " +
                   kept.error().describe());
      return;
    }
  }
}

}  // namespace kiln::internal
