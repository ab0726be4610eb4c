#include "output_judge.hpp"

#include <algorithm>

namespace kiln::internal {

namespace {

// The outcome and the first line of its reason: a report line, not a log.
std::string short_reason(const Measurement& m) {
  std::string r = outcome_name(m.outcome);
  if (!m.error.message.empty())
    r += ": " + m.error.message.substr(0, std::min<std::size_t>(200, m.error.message.find('\n')));
  return r;
}

}  // namespace

OutputJudge::OutputJudge(Config default_config, std::map<std::string, Tolerance> tolerances,
                         std::optional<std::string> default_unavailable)
    : default_(std::move(default_config)), tolerances_(std::move(tolerances)) {
  if (default_unavailable) to_consensus_locked(*default_unavailable);
}

Status OutputJudge::disagreement(const Outputs& got, const Outputs& want) const {
  for (const auto& [name, expected] : want) {
    auto it = got.find(name);
    if (it == got.end()) {
      return make_error(ErrorCode::kInternal, "output '" + name + "' was not read back",
                        {{"output", name}});
    }
    auto tol = tolerances_.find(name);
    Comparison c =
        compare(it->second, expected, tol != tolerances_.end() ? tol->second : Tolerance{});
    if (!c.ok) {
      return make_error(outcome_error_code(Outcome::kWrongResult),
                        "output '" + name + "': " + c.describe(), {{"output", name}});
    }
  }
  return ok_status();
}

void OutputJudge::to_consensus_locked(std::string why) {
  state_ = State::kConsensus;
  default_failure_ = std::move(why);
  auto waiting = std::move(pending_);
  pending_.clear();
  for (auto& [config, outputs] : waiting) cluster_locked(config, std::move(outputs));
}

void OutputJudge::cluster_locked(const std::string& config, Outputs outputs) {
  for (auto& g : groups_) {
    if (disagreement(outputs, g.representative).ok()) {
      g.members.push_back(config);
      return;
    }
  }
  groups_.push_back(Group{std::move(outputs), {config}});
}

void OutputJudge::observe(const Measurement& m, Outputs* outputs) {
  std::lock_guard<std::mutex> lock(mutex_);
  const std::string config = m.config.key();
  if (m.config == default_ && state_ == State::kWaiting) {
    if (!m.ok() || !outputs) {
      to_consensus_locked("the default config {" + m.config.to_string() + "} gave no reference (" +
                          short_reason(m) + ")");
      return;
    }
    state_ = State::kDefault;
    reference_ = std::move(*outputs);
    for (auto& [other, got] : pending_) {
      if (Status bad = disagreement(got, reference_); !bad.ok())
        wrong_[other] = bad.error().message;
    }
    pending_.clear();
    return;
  }
  if (!m.ok() || !outputs) return;
  switch (state_) {
    case State::kDefault:
      if (Status bad = disagreement(*outputs, reference_); !bad.ok())
        wrong_[config] = bad.error().message;
      break;
    case State::kWaiting:
      pending_.emplace_back(config, std::move(*outputs));
      break;
    case State::kConsensus:
      cluster_locked(config, std::move(*outputs));
      break;
  }
}

std::map<std::string, std::string> OutputJudge::wrong() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return wrong_;
}

bool OutputJudge::settled() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return state_ == State::kDefault;
}

ReferenceReport OutputJudge::finish() {
  std::lock_guard<std::mutex> lock(mutex_);
  ReferenceReport report;
  if (state_ == State::kDefault) {
    report.kind = ReferenceReport::Kind::kDefault;
    report.detail = "the default config {" + default_.to_string() + "}";
    return report;
  }
  if (state_ == State::kWaiting) {
    to_consensus_locked("the default config {" + default_.to_string() + "} was not measured");
  }
  // The largest group of agreeing configs, if one stands out.
  std::vector<const Group*> order;
  for (const auto& g : groups_) order.push_back(&g);
  std::stable_sort(order.begin(), order.end(), [](const Group* a, const Group* b) {
    return a->members.size() > b->members.size();
  });
  std::size_t healthy = 0;  // every pending config is in a group by now
  for (const auto& g : groups_) healthy += g.members.size();
  if (order.empty() || order[0]->members.size() < 2 ||
      (order.size() > 1 && order[1]->members.size() == order[0]->members.size())) {
    report.kind = ReferenceReport::Kind::kNone;
    std::string sizes;
    for (const Group* g : order)
      sizes += (sizes.empty() ? "" : ", ") + std::to_string(g->members.size());
    report.detail =
        default_failure_ + "; " +
        (healthy == 0   ? std::string("no config ran to compare outputs")
         : healthy == 1 ? std::string("only one config ran, with nothing to compare it to")
                        : "no group of configs with agreeing outputs is larger than the "
                          "others (groups of " +
                              sizes + ")");
    return report;
  }
  const Group& agreed = *order[0];
  report.kind = ReferenceReport::Kind::kConsensus;
  report.agreeing = agreed.members.size();
  report.detail = default_failure_;
  for (std::size_t i = 1; i < order.size(); ++i) {
    Status bad = disagreement(order[i]->representative, agreed.representative);
    for (const auto& config : order[i]->members) {
      wrong_[config] = "outputs disagree with the consensus of " +
                       std::to_string(agreed.members.size()) + " configs" +
                       (bad.ok() ? std::string() : " (" + bad.error().message + ")");
    }
  }
  return report;
}

void apply_verdicts(const std::map<std::string, std::string>& wrong,
                    std::vector<Measurement>& measurements, KernelStats& stats) {
  if (wrong.empty()) return;
  for (auto& m : measurements) {
    if (!m.ok()) continue;
    auto it = wrong.find(m.config.key());
    if (it == wrong.end()) continue;
    m.outcome = Outcome::kWrongResult;
    m.error = make_error(outcome_error_code(Outcome::kWrongResult), it->second);
    if (stats.benchmarked > 0) --stats.benchmarked;
    ++stats.failed;
    ++stats.failed_by_reason[outcome_name(Outcome::kWrongResult)];
  }
}

}  // namespace kiln::internal
