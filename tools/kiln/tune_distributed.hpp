// `kiln tune ... --distributed STRATEGY` under mpirun: one problem tuned by
// every rank of the job (kiln/distributed/distributed_tune.hpp).
#pragma once

#include <string>

#include "kiln/kernels/tune_request.hpp"

namespace kiln::tool {

// Exit code: 0 decided (and saved under this rank), 1 a rank failed or MPI
// is missing, 2 a bad strategy name.
int run_distributed_tune(const TuneRequest& request, const TuneOptions& options,
                         const std::string& strategy, bool json);

}  // namespace kiln::tool
