// A recorded space's objective: which figure of a record ranks the configs
// (Kernel Tuner's "objective", "time" by default) and in which direction.
// Kernel Tuner's hotspot files, for one, rank by GFLOP/s, and a config that
// runs more time steps per launch is slower yet better there: ranked by
// time, a replay would call the wrong config the optimum.
#pragma once

#include <optional>
#include <string>
#include <variant>

#include <nlohmann/json.hpp>

#include "kiln/core/error.hpp"
#include "kiln/lab/recorded_space.hpp"

namespace kiln::detail {

struct Objective {
  std::string name = "time";
  bool higher_is_better = false;
};

// The file's objective: its "objective" (absent: time) and its direction,
// the file's "objective_higher_is_better" or else Kernel Tuner's rule for
// the objectives it knows. An objective of no known direction, or either
// field of the wrong type, is an error that says what to add.
Result<Objective> read_objective(const nlohmann::json& file, const std::string& where);

// A working record's figure for `objective`: the number, or why it is no
// measurement (a failure's name there, zero or less, not finite). Throws
// std::invalid_argument when the record has no such field, which the
// reader reports as a malformed record.
std::variant<double, std::string> objective_figure(const nlohmann::json& record,
                                                   const Objective& objective);

// Sets out.optimum, out.optimum_ms and every working config's time_ms from
// the figures read into `objective` and the run times into `run_ms`: the
// run time itself when the objective is time, else the optimum's run time
// scaled by the config's shortfall in the figure. The optimum is the first
// config with the best figure, in file order.
void rank_by_objective(RecordedSpace& out);

}  // namespace kiln::detail
