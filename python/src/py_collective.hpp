// kiln.set_collective: the ranks a process decides with. A Python group
// (an mpi4py communicator, or any object with all_gather and broadcast of
// bytes: a torch.distributed wrapper) behind Kiln's Collective, shared by
// choose_one (the framework's TacticTuner) and every kiln.autotune kernel.
#pragma once

#include <nanobind/nanobind.h>

#include <memory>

#include "kiln/core/collective.hpp"

namespace kiln::py {

// The process's collective and strategy; null when each rank decides alone.
struct SharedCollective {
  std::shared_ptr<Collective> collective;
  DistributedStrategy strategy = DistributedStrategy::kBroadcast;
};
SharedCollective shared_collective();

void register_collective(nanobind::module_& m);

}  // namespace kiln::py

#include "kiln/tuner/tuner.hpp"
#include "py_runtime.hpp"

namespace kiln::py {

// `kernel` tuned for `args` as the process's collective says: alone when
// there is none; else with every rank (kiln::tune_distributed, its
// strategy), and the agreed record adopted by this rank's tuner, so every
// rank serves the identical config. `key`: the call's key bytes, which the
// ranks compare before anything is measured. Call without the GIL.
Result<TuneResult> tune_with_ranks(Runtime& rt, const TunableKernel& kernel, const ArgList& args,
                                   const std::string& key, const TuneOptions& options);

}  // namespace kiln::py
