// A Collective over a Python group object. Each operation takes the GIL to
// call the group, and is watched: a rank that never arrives ends this
// process with a message naming the operation and the deadline (mpirun
// then ends the job), since a blocked collective cannot be cancelled.
#include "py_collective.hpp"

#include <nanobind/stl/string.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <thread>

#include "kiln/framework/choose_one.hpp"
#include "py_errors.hpp"
#include "py_gil.hpp"
#include "py_runtime.hpp"

namespace nb = nanobind;

namespace kiln::py {

// Defined in py_framework.cpp: the process's choose_one tuner.
TacticTuner& framework_tuner();

namespace {

using Clock = std::chrono::steady_clock;

// Ends the process when an operation outlives its deadline; joins at once
// when it does not.
class Watch {
 public:
  Watch(std::chrono::seconds deadline, std::string what, int rank, int size)
      : thread_([this, deadline, what = std::move(what), rank, size] {
          std::unique_lock lock(mutex_);
          if (done_cv_.wait_for(lock, deadline, [this] { return done_; })) return;
          std::fprintf(stderr,
                       "kiln: rank %d of %d ends the job: the %s waited %lld s for a rank that "
                       "never arrived (a rank that skipped a kernel call, hung, or stuck in its "
                       "tuning); every rank must make the same tuned calls; raise "
                       "KILN_DISTRIBUTED_TIMEOUT_S (or set_collective(timeout_s=)) if tuning "
                       "takes longer\n",
                       rank, size, what.c_str(), static_cast<long long>(deadline.count()));
          std::fflush(stderr);
          std::_Exit(1);
        }) {}
  ~Watch() {
    {
      std::lock_guard lock(mutex_);
      done_ = true;
    }
    done_cv_.notify_all();
    thread_.join();
  }

 private:
  std::mutex mutex_;
  std::condition_variable done_cv_;
  bool done_ = false;
  std::thread thread_;
};

int group_int(nb::handle group, const char* mpi_name, const char* name) {
  if (nb::hasattr(group, mpi_name)) return nb::cast<int>(group.attr(mpi_name)());
  nb::object v = group.attr(name);
  if (PyCallable_Check(v.ptr())) v = v();
  return nb::cast<int>(v);
}

class PyCollective final : public Collective {
 public:
  PyCollective(nb::object group, std::chrono::seconds deadline)
      : group_(std::move(group)), deadline_(deadline) {
    rank_ = group_int(group_, "Get_rank", "rank");
    size_ = group_int(group_, "Get_size", "size");
    if (size_ < 1 || rank_ < 0 || rank_ >= size_) {
      throw Error(ErrorCode::kInvalidArgument,
                  "set_collective: the group says rank " + std::to_string(rank_) + " of " +
                      std::to_string(size_) + "; a rank is in [0, size)");
    }
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }

  Result<std::vector<std::string>> all_gather(const std::string& mine) override {
    Watch watch(deadline_, "all-gather", rank_, size_);
    auto start = Clock::now();
    GilAcquire gil;
    try {
      nb::bytes b(mine.data(), mine.size());
      nb::object got = nb::hasattr(group_, "all_gather") ? group_.attr("all_gather")(b)
                                                         : group_.attr("allgather")(b);
      std::vector<std::string> out;
      for (nb::handle item : got) out.push_back(as_bytes(item, "all_gather"));
      if (static_cast<int>(out.size()) != size_) {
        return make_error(ErrorCode::kInvalidArgument,
                          "the group's all_gather returned " + std::to_string(out.size()) +
                              " items for " + std::to_string(size_) +
                              " ranks; it returns every rank's bytes, in rank order");
      }
      seconds_ += std::chrono::duration<double>(Clock::now() - start).count();
      return out;
    } catch (nb::python_error& e) {
      return make_error(ErrorCode::kInternal,
                        std::string("the group's all_gather raised ") + e.what());
    } catch (const Error& e) {
      return make_error(e.code(), e.what());
    }
  }

  Result<std::string> broadcast(const std::string& bytes, int root) override {
    Watch watch(deadline_, "broadcast", rank_, size_);
    auto start = Clock::now();
    GilAcquire gil;
    try {
      nb::bytes b(bytes.data(), bytes.size());
      nb::object got = nb::hasattr(group_, "broadcast")
                           ? group_.attr("broadcast")(b, root)
                           : group_.attr("bcast")(b, nb::arg("root") = root);
      seconds_ += std::chrono::duration<double>(Clock::now() - start).count();
      return as_bytes(got, "broadcast");
    } catch (nb::python_error& e) {
      return make_error(ErrorCode::kInternal,
                        std::string("the group's broadcast raised ") + e.what());
    } catch (const Error& e) {
      return make_error(e.code(), e.what());
    }
  }

  Status barrier() override {
    auto all = all_gather(std::string());
    if (!all.ok()) return all.error();
    return ok_status();
  }

  [[noreturn]] void abort_job(const std::string& message, int code) override {
    std::fprintf(stderr, "kiln: rank %d of %d ends the job: %s\n", rank_, size_, message.c_str());
    std::fflush(stderr);
    std::_Exit(code);
  }
  double seconds_in_collectives() const override { return seconds_; }

 private:
  static std::string as_bytes(nb::handle item, const char* op) {
    if (!nb::isinstance<nb::bytes>(item)) {
      throw Error(ErrorCode::kInvalidArgument,
                  std::string("the group's ") + op + " returned " +
                      nb::cast<std::string>(nb::repr(item)).substr(0, 80) +
                      " where Kiln expects the bytes it sent");
    }
    nb::bytes b = nb::borrow<nb::bytes>(item);
    return std::string(b.c_str(), b.size());
  }

  nb::object group_;
  std::chrono::seconds deadline_;
  int rank_ = 0, size_ = 1;
  double seconds_ = 0;
};

// Never destroyed: a group object freed after the interpreter is gone
// would crash the exit.
SharedCollective& current() {
  static auto* shared = new SharedCollective();
  return *shared;
}
std::mutex& current_mutex() {
  static auto* m = new std::mutex();
  return *m;
}

}  // namespace

SharedCollective shared_collective() {
  std::lock_guard lock(current_mutex());
  return current();
}

void register_collective(nb::module_& m) {
  m.def(
      "_set_collective",
      [](nb::object group, const std::string& strategy, long long timeout_s) {
        SharedCollective next;
        if (!group.is_none()) {
          next.strategy = take(parse_distributed_strategy(strategy));
          if (next.strategy != DistributedStrategy::kIndependent) {
            next.collective =
                std::make_shared<PyCollective>(group, std::chrono::seconds(timeout_s));
          }
        }
        framework_tuner().set_collective(
            next.collective, next.collective ? next.strategy : DistributedStrategy::kBroadcast);
        std::lock_guard lock(current_mutex());
        current() = next;
      },
      nb::arg("group").none(), nb::arg("strategy"), nb::arg("timeout_s"));
}

}  // namespace kiln::py
