// The auto backend: several implementations of one op, each with a support
// check. For a call, the unsupported ones are pruned (with their reasons)
// before any is built or compiled, a heuristic orders the rest, and
// choose_one tunes across all of them. When none fits, the error lists
// every backend's reason.
//
//   kiln::AutoBackend rmsnorm("rmsnorm");
//   rmsnorm.add({.name = "kiln_cuda", .min_cc = {{8, 0}},
//                .supports = [](auto& q) { return q.inputs[0].tensor.shape[1] % 8 == 0
//                                               ? "" : "hidden not a multiple of 8"; },
//                .priority = [](auto&) { return 2.0; },
//                .make = [&] { return std::make_shared<KernelRunner>(...); }});
//   rmsnorm.add({.name = "reference", .make = [] { return std::make_shared<Ref>(); }});
//   kiln::Choice c = rmsnorm.choose(tuner, inputs);
//
// Cross-backend validation runs each backend on the same inputs and
// compares its outputs with the first's, elementwise (atol/rtol) or by
// cosine similarity, naming every backend that disagrees.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kiln/framework/choose_one.hpp"
#include "kiln/tuner/compare.hpp"

namespace kiln {

// What a support check sees.
struct SupportQuery {
  const DeviceIdentity& device;
  const ArgList& inputs;
};

struct BackendSpec {
  std::string name;
  // Oldest compute capability it runs on (major, minor); unset: any. Checked
  // before `supports`.
  std::optional<std::pair<int, int>> min_cc;
  // Problem constraints: "" when it can run the call, else why not.
  std::function<std::string(const SupportQuery&)> supports;
  // Heuristic rank: higher first (ties keep the order of add()). Unset: 0.
  std::function<double(const SupportQuery&)> priority;
  // Builds the runner, once, the first time the backend is suitable for a
  // call: a backend that never fits is never built or compiled.
  std::function<std::shared_ptr<TunableRunner>()> make;
};

struct BackendPlan {
  std::vector<std::string> order;                           // suitable, best first
  std::vector<TunableRunner*> runners;                      // the same order
  std::vector<std::pair<std::string, std::string>> pruned;  // name, reason
};

class AutoBackend {
 public:
  explicit AutoBackend(std::string op);

  // Throws kiln::Error when the name is empty or taken or `make` is unset.
  AutoBackend& add(BackendSpec spec);

  // The suitable backends for a call, ordered. kUnavailable when none fits,
  // its message naming each backend and its reason.
  Result<BackendPlan> plan(const DeviceIdentity& device, const ArgList& inputs);
  // plan() then tuner.choose_one across the suitable backends (the first,
  // by the heuristic, gives the fallback). Throws kiln::Error with plan()'s
  // message when none fits.
  Choice choose(TacticTuner& tuner, const ArgList& inputs, const TuningSpec& spec = TuningSpec());

  const std::string& op() const { return op_; }
  std::size_t built() const;  // runners made so far

 private:
  struct Entry {
    BackendSpec spec;
    std::shared_ptr<TunableRunner> runner;
  };
  std::string op_;
  std::vector<Entry> entries_;
};

// One backend's outputs against the reference's.
struct BackendCheck {
  std::string name;
  bool ok = true;
  std::string error;                // the run failed (then no comparison)
  std::vector<Comparison> outputs;  // one per output, in the order given
};

struct ValidationReport {
  std::string reference;             // the backend every other is compared with
  std::vector<std::string> outputs;  // names of the outputs compared
  std::vector<BackendCheck> checks;
  bool ok() const;
  std::vector<std::string> disagreeing() const;
  // "backend 'fast' disagrees with 'reference' on output 'y': 3 of 4096
  // elements differ ...": one line per disagreeing backend.
  std::string describe() const;
};

struct ValidationCandidate {
  std::string name;
  TunableRunner* runner = nullptr;
  int tactic = kFallbackTactic;
};

// Runs each candidate on `inputs` and compares the named output tensors
// with the first candidate's. Outputs are read through `device` (null:
// host memory). A candidate whose run fails is reported, not thrown.
ValidationReport validate_backends(const std::vector<ValidationCandidate>& candidates,
                                   const ArgList& inputs, const std::vector<std::string>& outputs,
                                   const Tolerance& tolerance, Device* device = nullptr);

}  // namespace kiln
