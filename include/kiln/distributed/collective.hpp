// The few collective operations distributed tuning needs, over bytes, so
// that any transport can stand behind them: MPI here (mpi_collective()), a
// Python binding's torch.distributed later. Every operation has a deadline:
// a rank that never arrives ends the job with a message, never a hang.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "kiln/core/error.hpp"

namespace kiln {

class Collective {
 public:
  virtual ~Collective() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Every rank's `mine`, in rank order, on every rank.
  virtual Result<std::vector<std::string>> all_gather(const std::string& mine) = 0;
  // `bytes` of rank `root` on every rank (ignored elsewhere).
  virtual Result<std::string> broadcast(const std::string& bytes, int root) = 0;
  virtual Status barrier() = 0;
  // Ends every rank of the job with `message` (naming the rank at fault)
  // and exit status `code`.
  [[noreturn]] virtual void abort_job(const std::string& message, int code) = 0;
  // Seconds spent inside collective operations so far (for reports).
  virtual double seconds_in_collectives() const = 0;
};

// Whether this Kiln was built with MPI (Open MPI from Debian, CMake's FindMPI).
bool mpi_built();

// The job's MPI communicator (MPI_COMM_WORLD), initialised on first use and
// finalised when the object dies. `deadline`: how long one operation may
// wait for the slowest rank before the job is aborted (KILN_DISTRIBUTED_TIMEOUT_S,
// default 3600, where the caller passes it). kUnavailable, naming the fix,
// when Kiln was built without MPI.
Result<std::unique_ptr<Collective>> mpi_collective(std::chrono::seconds deadline);

}  // namespace kiln
