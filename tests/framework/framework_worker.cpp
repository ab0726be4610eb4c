// One process's choose_one, for the cross-process persistence test:
//   kiln_framework_worker CACHE_FILE tune|serve OUT_FILE
// runs choose_one for a fixed op and shape inside a TuningScope on
// CACHE_FILE (tuning on for "tune", off for "serve") and writes
// "<source> <runner> <tactic>" to OUT_FILE.
#include <cstdio>
#include <fstream>
#include <string>

#include "framework_test_util.hpp"
#include "kiln/framework/tuning_scope.hpp"

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s CACHE_FILE tune|serve OUT_FILE\n", argv[0]);
    return 2;
  }
  std::string mode = argv[2];
  kiln::TacticTuner tuner(kiln::testing::quick_options());
  kiln::testing::ScaleRunner a("worker_a", {0, 1, 2}), b("worker_b", {0, 1});
  kiln::TunableRunner* runners[] = {&a, &b};
  kiln::testing::ScaleCall call(16, 256);
  kiln::Choice c;
  {
    kiln::TuningScopeOptions options;
    options.tune = mode == "tune";
    options.cache_path = argv[1];
    options.rank = -1;
    kiln::TuningScope scope(tuner, options);
    c = tuner.choose_one("persisted_op", runners, call.args);
  }
  std::ofstream out(argv[3]);
  out << kiln::choice_source_name(c.source) << " " << c.runner->id().text() << " " << c.tactic
      << "\n";
  return out ? 0 : 1;
}
