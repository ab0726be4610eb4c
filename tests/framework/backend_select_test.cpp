// The auto backend: pruning before anything is built, heuristic order,
// the none-suitable error, tuning across the suitable ones, and
// cross-backend validation.
#include <gtest/gtest.h>

#include "framework_test_util.hpp"
#include "kiln/framework/backend_select.hpp"
#include "kiln/framework/tuning_scope.hpp"
#include "skip.hpp"

namespace kiln {
namespace {

using testing::ScaleCall;
using testing::ScaleRunner;

struct Counted {
  int made = 0;
  std::shared_ptr<ScaleRunner> runner;
  std::function<std::shared_ptr<TunableRunner>()> factory(std::string name,
                                                          std::vector<int> tactics,
                                                          float a = 2.0f) {
    return [this, name, tactics, a] {
      ++made;
      runner = std::make_shared<ScaleRunner>(name, tactics, a);
      return runner;
    };
  }
};

// Three backends: one for compute capability 9.0+, one for even widths
// only, and a reference that runs anything.
struct ThreeBackends {
  Counted hopper, even, reference;
  AutoBackend backend{"scale"};
  ThreeBackends() {
    BackendSpec h;
    h.name = "hopper";
    h.min_cc = std::pair{9, 0};
    h.priority = [](const SupportQuery&) { return 3.0; };
    h.make = hopper.factory("hopper", {0, 1});
    BackendSpec e;
    e.name = "even";
    e.supports = [](const SupportQuery& q) -> std::string {
      return q.inputs[0].tensor.shape[1] % 2 == 0 ? "" : "needs an even width";
    };
    e.priority = [](const SupportQuery&) { return 2.0; };
    e.make = even.factory("even", {0, 1});
    BackendSpec r;
    r.name = "reference";
    r.make = reference.factory("reference", {0});
    backend.add(std::move(r)).add(std::move(e)).add(std::move(h));
  }
};

DeviceIdentity device_cc(int major, int minor) {
  return DeviceIdentity{"sm_" + std::to_string(major * 10 + minor), "test GPU", major, minor};
}

TEST(AutoBackend, PrunesBeforeBuildingAndOrdersByTheHeuristic) {
  ThreeBackends t;
  ScaleCall odd(2, 7);
  auto plan = t.backend.plan(device_cc(8, 0), odd.args);
  ASSERT_TRUE(plan.ok()) << plan.error().describe();
  EXPECT_EQ(plan->order, std::vector<std::string>{"reference"});
  ASSERT_EQ(plan->pruned.size(), 2u);
  EXPECT_EQ(plan->pruned[0].first, "even");
  EXPECT_EQ(plan->pruned[0].second, "needs an even width");
  EXPECT_EQ(plan->pruned[1].first, "hopper");
  EXPECT_NE(plan->pruned[1].second.find("compute capability >= 9.0"), std::string::npos);
  EXPECT_NE(plan->pruned[1].second.find("has 8.0"), std::string::npos);
  EXPECT_EQ(t.hopper.made, 0) << "an unsupported backend is never built";
  EXPECT_EQ(t.even.made, 0);
  EXPECT_EQ(t.backend.built(), 1u);

  ScaleCall even_width(2, 8);
  plan = t.backend.plan(device_cc(9, 0), even_width.args);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->order, (std::vector<std::string>{"hopper", "even", "reference"}));
  EXPECT_TRUE(plan->pruned.empty());
  EXPECT_EQ(t.hopper.made, 1);
  // Built once, reused.
  plan = t.backend.plan(device_cc(9, 0), even_width.args);
  EXPECT_EQ(t.hopper.made, 1);
  EXPECT_EQ(plan->runners[0], t.hopper.runner.get());
}

TEST(AutoBackend, NoneSuitableListsEveryReason) {
  AutoBackend backend("gemm");
  BackendSpec a;
  a.name = "tensor_cores";
  a.min_cc = std::pair{8, 0};
  a.make = [] { return std::make_shared<ScaleRunner>("tc", std::vector<int>{0}); };
  BackendSpec b;
  b.name = "small_k";
  b.supports = [](const SupportQuery&) { return std::string("K must be <= 64"); };
  b.make = [] { return std::make_shared<ScaleRunner>("sk", std::vector<int>{0}); };
  backend.add(std::move(a)).add(std::move(b));
  ScaleCall call(2, 4);
  auto plan = backend.plan(device_cc(7, 5), call.args);
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.error().code, ErrorCode::kUnavailable);
  const std::string& m = plan.error().message;
  EXPECT_NE(m.find("op 'gemm': no backend can run this call"), std::string::npos) << m;
  EXPECT_NE(m.find("tensor_cores: needs compute capability >= 8.0"), std::string::npos) << m;
  EXPECT_NE(m.find("small_k: K must be <= 64"), std::string::npos) << m;
  TacticTuner tuner;
  EXPECT_THROW(backend.choose(tuner, call.args), Error);
  EXPECT_EQ(backend.built(), 0u);
}

TEST(AutoBackend, TunesAcrossEverySuitableBackend) {
  if (!Options::global().tuning) KILN_SKIP(Skip::kTuningOff) << "KILN_TUNING=0";
  ThreeBackends t;
  auto opts = testing::quick_options();
  opts.identity = device_cc(8, 6);
  TacticTuner tuner(opts);
  ScaleCall call(4, 8);
  {
    // Break every tactic of the heuristic's favourite: tuning must look
    // past it to the others.
    auto plan = t.backend.plan(tuner.identity().device, call.args);
    ASSERT_TRUE(plan.ok());
    t.even.runner->broken = {0, 1};
  }
  TuningScope tuning(true);
  Choice c = t.backend.choose(tuner, call.args);
  EXPECT_EQ(c.source, ChoiceSource::kTuned);
  EXPECT_EQ(c.runner, t.reference.runner.get());
  EXPECT_GT(t.even.runner->runs, 0) << "the suitable backend was profiled";
  EXPECT_EQ(t.hopper.made, 0) << "the unsuitable one was not";
  EXPECT_EQ(tuner.stats().profiled, 3u);
}

TEST(CrossBackend, DisagreeingBackendsAreNamed) {
  ScaleRunner ref("ref", {0}), same("same", {0}), wrong("wrong", {0}, 2.5f),
      scaled("scaled", {0}, 2.0f * 1.0001f);
  wrong.broken = {};
  ScaleRunner failing("failing", {0});
  failing.broken = {0};
  ScaleCall call(4, 64);
  std::vector<ValidationCandidate> cands = {
      {"ref", &ref, 0}, {"same", &same, 0}, {"wrong", &wrong, 0}, {"failing", &failing, 0}};
  Tolerance tol;
  auto report = validate_backends(cands, call.args, {"y"}, tol);
  EXPECT_FALSE(report.ok());
  EXPECT_EQ(report.disagreeing(), (std::vector<std::string>{"wrong", "failing"}));
  std::string text = report.describe();
  EXPECT_NE(text.find("backend 'wrong' disagrees with 'ref' on output 'y'"), std::string::npos)
      << text;
  EXPECT_NE(text.find("backend 'failing' failed to run"), std::string::npos) << text;

  // A tiny uniform scale passes a cosine threshold but not a tight allclose.
  std::vector<ValidationCandidate> pair = {{"ref", &ref, 0}, {"scaled", &scaled, 0}};
  Tolerance tight;
  tight.atol = 1e-7;
  tight.rtol = 1e-7;
  EXPECT_FALSE(validate_backends(pair, call.args, {"y"}, tight).ok());
  Tolerance cosine;
  cosine.min_cosine = 0.9999;
  auto by_cosine = validate_backends(pair, call.args, {"y"}, cosine);
  EXPECT_TRUE(by_cosine.ok()) << by_cosine.describe();
}

}  // namespace
}  // namespace kiln
