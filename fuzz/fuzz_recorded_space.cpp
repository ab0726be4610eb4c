// The recorded-space reader (Kernel Tuner cache files, read by `kiln-lab tune
// --recorded` and `kiln-lab bench search`). Promises
// (lab/include/kiln/lab/recorded_space.hpp): any text gives a space or an
// error naming the file, never an exception or a crash; a space that was
// read has a positive optimum that one of its working configs holds, and
// every config it holds is a member of its space, so an exhaustive replay
// of it reaches exactly 1.0 of the optimum; every strategy replays a small
// space within its budget with fractions in 0..1 that never fall.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>
#include <string_view>

#include "fuzz_check.hpp"
#include "kiln/lab/recorded_space.hpp"
#include "kiln/lab/search_replay.hpp"
#include "kiln/search/search.hpp"

namespace {

void check_curve(const kiln::ReplayCurve& curve, std::size_t budget, std::string_view text) {
  using kiln::fuzz::check;
  check(curve.fraction.size() <= budget, "a replay measured past its budget", text);
  double last = 0;
  for (double f : curve.fraction) {
    check(f >= last && f <= 1.0 && std::isfinite(f), "a best-so-far fraction fell or left 0..1",
          text);
    last = f;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using kiln::fuzz::check;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    kiln::Result<kiln::RecordedSpace> r = kiln::parse_recorded_space(text, "fuzz.json");
    if (!r.ok()) {
      check(r.error().message.find("fuzz.json") != std::string::npos,
            "a refusal that does not name the file", text);
      return 0;
    }
    check(r->optimum_ms > 0 && std::isfinite(r->optimum_ms), "an optimum that is no duration",
          text);
    bool held = false;
    for (const kiln::RecordedConfig& c : r->configs) {
      check(!c.time_ms || *c.time_ms >= r->optimum_ms, "a config faster than the optimum", text);
      check(c.compile_ms >= 0 && c.benchmark_ms >= 0, "a negative cost", text);
      held = held || (c.time_ms && *c.time_ms == r->optimum_ms);
      check(r->find(c.config) != nullptr, "a config its own space cannot find", text);
    }
    check(held, "an optimum no config holds", text);
    // Replays only on small spaces: the fuzzer must stay fast.
    if (r->space.cartesian_size() > 512) return 0;
    check(r->space.size() == r->configs.size(), "the space and its records disagree in size", text);
    kiln::Result<kiln::ReplayCurve> all =
        kiln::replay_search(*r, "exhaustive", r->configs.size(), 1);
    check(all.ok(), "an exhaustive replay refused", text);
    check(!all->fraction.empty() && all->fraction.back() == 1.0,
          "an exhaustive replay that does not reach the optimum", text);
    const std::size_t budget = std::min<std::size_t>(r->configs.size(), 12);
    for (const auto& info : kiln::search_strategies()) {
      kiln::Result<kiln::ReplayCurve> curve = kiln::replay_search(*r, info.name, budget, 3);
      check(curve.ok(), "a strategy refused a readable space: " + info.name, text);
      check_curve(*curve, budget, text);
    }
  } catch (const std::exception& e) {
    kiln::fuzz::broken(std::string("exception escaped the reader or a replay: ") + e.what(), text);
  }
  return 0;
}
