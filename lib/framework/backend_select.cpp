// The auto backend's pruning and ordering, and cross-backend validation.
#include "kiln/framework/backend_select.hpp"

#include <algorithm>

#include "kiln/core/error.hpp"
#include "read_outputs.hpp"

namespace kiln {

AutoBackend::AutoBackend(std::string op) : op_(std::move(op)) {}

AutoBackend& AutoBackend::add(BackendSpec spec) {
  if (spec.name.empty() || !spec.make) {
    throw Error(ErrorCode::kInvalidArgument,
                "auto backend '" + op_ + "': a backend needs a name and a make function");
  }
  for (const auto& e : entries_) {
    if (e.spec.name == spec.name) {
      throw Error(ErrorCode::kInvalidArgument,
                  "auto backend '" + op_ + "': backend '" + spec.name + "' is added twice");
    }
  }
  entries_.push_back(Entry{std::move(spec), nullptr});
  return *this;
}

Result<BackendPlan> AutoBackend::plan(const DeviceIdentity& device, const ArgList& inputs) {
  SupportQuery query{device, inputs};
  BackendPlan plan;
  std::vector<std::pair<double, Entry*>> suitable;
  for (auto& e : entries_) {
    std::string reason;
    if (e.spec.min_cc) {
      auto [major, minor] = *e.spec.min_cc;
      if (std::pair(device.cc_major, device.cc_minor) < std::pair(major, minor)) {
        reason = "needs compute capability >= " + std::to_string(major) + "." +
                 std::to_string(minor) + ", the device (" + device.name + ") has " +
                 device.compute_capability();
      }
    }
    if (reason.empty() && e.spec.supports) reason = e.spec.supports(query);
    if (!reason.empty()) {
      plan.pruned.emplace_back(e.spec.name, std::move(reason));
      continue;
    }
    suitable.emplace_back(e.spec.priority ? e.spec.priority(query) : 0.0, &e);
  }
  if (suitable.empty()) {
    std::string message = "op '" + op_ + "': no backend can run this call:";
    std::map<std::string, std::string> details;
    for (const auto& [name, reason] : plan.pruned) {
      message += "\n  " + name + ": " + reason;
      details[name] = reason;
    }
    if (entries_.empty()) message += " none was added (AutoBackend::add)";
    return make_error(ErrorCode::kUnavailable, message, details);
  }
  std::stable_sort(suitable.begin(), suitable.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  for (auto& [priority, e] : suitable) {
    if (!e->runner) e->runner = e->spec.make();
    if (!e->runner) {
      throw Error(ErrorCode::kInvalidArgument,
                  "auto backend '" + op_ + "': backend '" + e->spec.name + "' made no runner");
    }
    plan.order.push_back(e->spec.name);
    plan.runners.push_back(e->runner.get());
  }
  return plan;
}

Choice AutoBackend::choose(TacticTuner& tuner, const ArgList& inputs, const TuningSpec& spec) {
  auto p = plan(tuner.identity().device, inputs);
  if (!p.ok()) throw Error(p.error());
  return tuner.choose_one(op_, p->runners, inputs, spec);
}

std::size_t AutoBackend::built() const {
  return static_cast<std::size_t>(
      std::count_if(entries_.begin(), entries_.end(), [](const Entry& e) { return e.runner; }));
}

bool ValidationReport::ok() const {
  return std::all_of(checks.begin(), checks.end(), [](const BackendCheck& c) { return c.ok; });
}

std::vector<std::string> ValidationReport::disagreeing() const {
  std::vector<std::string> out;
  for (const auto& c : checks)
    if (!c.ok) out.push_back(c.name);
  return out;
}

std::string ValidationReport::describe() const {
  std::string out;
  for (const auto& c : checks) {
    if (c.ok) continue;
    if (!out.empty()) out += "\n";
    if (!c.error.empty()) {
      out += "backend '" + c.name + "' failed to run: " + c.error;
      continue;
    }
    for (std::size_t i = 0; i < c.outputs.size(); ++i) {
      if (c.outputs[i].ok) continue;
      out += "backend '" + c.name + "' disagrees with '" + reference + "' on output '" +
             (i < outputs.size() ? outputs[i] : std::to_string(i)) +
             "': " + c.outputs[i].describe();
    }
  }
  return out.empty() ? "every backend agrees with '" + reference + "'" : out;
}

ValidationReport validate_backends(const std::vector<ValidationCandidate>& candidates,
                                   const ArgList& inputs, const std::vector<std::string>& outputs,
                                   const Tolerance& tolerance, Device* device) {
  if (candidates.empty() || outputs.empty()) {
    throw Error(ErrorCode::kInvalidArgument,
                "validate_backends needs at least one candidate and one output name");
  }
  ValidationReport report;
  report.reference = candidates[0].name;
  report.outputs = outputs;
  auto run = [&](const ValidationCandidate& c) -> Result<std::vector<std::vector<double>>> {
    Status st = c.runner->run(inputs, c.tactic);
    if (st.ok()) st = c.runner->synchronize();
    if (!st.ok()) return st.error();
    return internal::read_outputs(inputs, outputs, device);
  };
  auto reference = run(candidates[0]);
  if (!reference.ok()) {
    report.checks.push_back({candidates[0].name, false, reference.error().describe(), {}});
    return report;
  }
  for (std::size_t i = 1; i < candidates.size(); ++i) {
    BackendCheck check;
    check.name = candidates[i].name;
    auto got = run(candidates[i]);
    if (!got.ok()) {
      check.ok = false;
      check.error = got.error().describe();
    } else {
      for (std::size_t o = 0; o < outputs.size(); ++o) {
        check.outputs.push_back(compare((*got)[o], (*reference)[o], tolerance));
        check.ok = check.ok && check.outputs.back().ok;
      }
    }
    report.checks.push_back(std::move(check));
  }
  return report;
}

}  // namespace kiln
