// The few collective operations ranks need to agree on a decision, over
// bytes, so that any transport can stand behind them: MPI
// (kiln/distributed/collective.hpp: mpi_collective()), or a Python group
// (mpi4py, torch.distributed) through the Python package. In core because
// both the tuner's callers and choose_one (framework) take one. Every
// operation has a deadline: a rank that never arrives ends the job with a
// message, never a hang.
#pragma once

#include <string>
#include <string_view>
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

// How ranks reach one decision (docs/distributed.md), TensorRT-LLM's
// strategies:
//   independent  each rank tunes alone (decisions may differ);
//   broadcast    rank 0 tunes, every other rank receives its decision;
//   parallel     the candidates are dealt out across ranks, each rank
//                measures its share, the winner is chosen from all;
//   merge        every rank measures everything; each candidate's time is
//                the median over ranks (failed anywhere = failed).
enum class DistributedStrategy { kIndependent, kBroadcast, kParallel, kMerge };
const char* distributed_strategy_name(DistributedStrategy strategy);
// kInvalidArgument listing the valid names.
Result<DistributedStrategy> parse_distributed_strategy(std::string_view name);

}  // namespace kiln
