// Kiln's MPI transport for the Collective interface (kiln/core/collective.hpp).
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "kiln/core/collective.hpp"
#include "kiln/core/error.hpp"

namespace kiln {

// Whether this Kiln was built with MPI (Open MPI from Debian, CMake's FindMPI).
bool mpi_built();
// Why a build without MPI has none and what to do instead: rebuild with Open
// MPI, or, in the Python package's wheel (which never links MPI), decide
// across ranks from Python.
std::string mpi_absent_fix();

// The job's MPI communicator (MPI_COMM_WORLD), initialised on first use and
// finalised when the object dies. `deadline`: how long one operation may
// wait for the slowest rank before the job is aborted (KILN_DISTRIBUTED_TIMEOUT_S,
// default 3600, where the caller passes it). kUnavailable, naming the fix,
// when Kiln was built without MPI.
Result<std::unique_ptr<Collective>> mpi_collective(std::chrono::seconds deadline);

}  // namespace kiln
