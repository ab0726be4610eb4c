// The MPI Collective: MPI_COMM_WORLD, nonblocking collectives polled against
// a deadline (a blocking MPI_Allgather would wait forever for a rank that
// hangs), MPI_Abort to end the job. The only file that includes mpi.h.
// Built into the distributed library (kiln_distributed_linked), or alone as
// the MPI plugin (KILN_MPI_PLUGIN: libkiln_mpi.so, which the `kiln` command
// loads for --distributed, mpi_plugin_proxy.cpp).
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <thread>

#include "kiln/distributed/collective.hpp"

#ifdef KILN_HAVE_MPI
#include <mpi.h>
#endif

namespace kiln {

#ifndef KILN_MPI_PLUGIN
bool mpi_built() {
#ifdef KILN_HAVE_MPI
  return true;
#else
  return false;
#endif
}

std::string mpi_absent_fix() {
#ifdef KILN_PYTHON_PACKAGE
  // A wheel user has no build to redo: the ranks decide through the
  // caller's own group instead.
  return "the Python package's kiln has no MPI: make the ranks decide together from Python, "
         "kiln.set_collective(group) with an mpi4py communicator or a torch.distributed group "
         "(docs/python.md, \"Ranks that decide together\"), or build Kiln from its sources with "
         "Open MPI (scripts/setup.sh)";
#else
  return "install Open MPI (libopenmpi-dev, scripts/setup.sh) and rebuild";
#endif
}
#endif

#ifdef KILN_HAVE_MPI
namespace {

using Clock = std::chrono::steady_clock;

class MpiCollective final : public Collective {
 public:
  // The deadline is capped at 30 days: `now - start > deadline` compares in
  // the clock's nanoseconds, where 10^10 s overflows.
  explicit MpiCollective(std::chrono::seconds deadline)
      : deadline_(std::min(deadline, std::chrono::seconds(30L * 86'400))) {
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized) {
      int provided = 0;
      MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
      owns_ = true;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
  }
  ~MpiCollective() override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (owns_ && !finalized) MPI_Finalize();
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  double seconds_in_collectives() const override { return seconds_; }

  Result<std::vector<std::string>> all_gather(const std::string& mine) override {
    std::uint64_t my_size = mine.size();
    std::vector<std::uint64_t> sizes(size_);
    MPI_Request request;
    MPI_Iallgather(&my_size, 1, MPI_UINT64_T, sizes.data(), 1, MPI_UINT64_T, MPI_COMM_WORLD,
                   &request);
    if (Status s = wait(request, "all-gather (sizes)"); !s.ok()) return s.error();
    std::vector<int> counts(size_), offsets(size_);
    std::uint64_t total = 0;
    for (int r = 0; r < size_; ++r) {
      if (sizes[r] > (1u << 30) || total > (1u << 30))
        return make_error(ErrorCode::kInvalidArgument, "a rank's message is over 1 GiB");
      counts[r] = static_cast<int>(sizes[r]);
      offsets[r] = static_cast<int>(total);
      total += sizes[r];
    }
    std::string all(total, '\0');
    MPI_Iallgatherv(mine.data(), static_cast<int>(mine.size()), MPI_BYTE, all.data(), counts.data(),
                    offsets.data(), MPI_BYTE, MPI_COMM_WORLD, &request);
    if (Status s = wait(request, "all-gather"); !s.ok()) return s.error();
    std::vector<std::string> out;
    for (int r = 0; r < size_; ++r) out.push_back(all.substr(offsets[r], counts[r]));
    return out;
  }

  Result<std::string> broadcast(const std::string& bytes, int root) override {
    std::uint64_t size = bytes.size();
    MPI_Request request;
    MPI_Ibcast(&size, 1, MPI_UINT64_T, root, MPI_COMM_WORLD, &request);
    if (Status s = wait(request, "broadcast (size)"); !s.ok()) return s.error();
    std::string out = rank_ == root ? bytes : std::string(size, '\0');
    MPI_Ibcast(out.data(), static_cast<int>(size), MPI_BYTE, root, MPI_COMM_WORLD, &request);
    if (Status s = wait(request, "broadcast"); !s.ok()) return s.error();
    return out;
  }

  Status barrier() override {
    MPI_Request request;
    MPI_Ibarrier(MPI_COMM_WORLD, &request);
    return wait(request, "barrier");
  }

  [[noreturn]] void abort_job(const std::string& message, int code) override {
    std::fprintf(stderr, "kiln: rank %d of %d ends the job: %s\n", rank_, size_, message.c_str());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, code);
    std::_Exit(code);  // MPI_Abort does not return; if it did, still end
  }

 private:
  // Polls `request` until done or the deadline: then the job is aborted,
  // since a collective cannot be cancelled and a rank is missing.
  Status wait(MPI_Request& request, const char* what) {
    const auto start = Clock::now();
    int done = 0;
    auto sleep = std::chrono::microseconds(20);
    for (;;) {
      MPI_Test(&request, &done, MPI_STATUS_IGNORE);
      if (done) break;
      if (Clock::now() - start > deadline_) {
        abort_job(std::string("the ") + what + " waited " + std::to_string(deadline_.count()) +
                      " s for a rank that never arrived (hung or stuck in its tuning); raise "
                      "KILN_DISTRIBUTED_TIMEOUT_S if tuning one shard takes longer",
                  1);
      }
      std::this_thread::sleep_for(sleep);
      if (sleep < std::chrono::milliseconds(2)) sleep *= 2;
    }
    seconds_ += std::chrono::duration<double>(Clock::now() - start).count();
    return ok_status();
  }

  std::chrono::seconds deadline_;
  int rank_ = 0, size_ = 1;
  bool owns_ = false;
  double seconds_ = 0;
};

}  // namespace
#endif

#ifdef KILN_MPI_PLUGIN
// The one symbol the proxy looks up: a new Collective the caller owns.
extern "C" __attribute__((visibility("default"))) Collective* kiln_mpi_collective_plugin(
    long long deadline_s) {
  return new MpiCollective(std::chrono::seconds(deadline_s));
}
#else
Result<std::unique_ptr<Collective>> mpi_collective(std::chrono::seconds deadline) {
#ifdef KILN_HAVE_MPI
  return std::unique_ptr<Collective>(new MpiCollective(deadline));
#else
  (void)deadline;
  return make_error(
      ErrorCode::kUnavailable,
      "this Kiln was built without MPI, so --distributed cannot run: " + mpi_absent_fix());
#endif
}
#endif

}  // namespace kiln
