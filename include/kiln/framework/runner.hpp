// Runners and tactics: how a framework hands Kiln the implementations of one
// op. A runner is one implementation (a Kiln kernel template, a vendor
// library call, a hand-written loop); a tactic is one way of running it (a
// config of the template, an algorithm id of the library). Tactic -1, the
// fallback, must handle every shape: it is what an op runs when nothing is
// tuned or tuning is skipped.
//
//   class MyGemm : public kiln::TunableRunner {
//    public:
//     MyGemm() : TunableRunner("my_gemm", "2") {}
//     std::vector<int> tactics(const kiln::ArgList& in) override { return {0, 1, 2}; }
//     kiln::Status run(const kiln::ArgList& in, int tactic) override { ... }
//   };
//
// The identity (name, version) is what persisted decisions are keyed on, so
// it must be the same in every process: bump the version when the runner's
// tactics change meaning.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "kiln/device/device.hpp"
#include "kiln/tuner/args.hpp"

namespace kiln {

// The tactic every runner must accept for any shape.
inline constexpr int kFallbackTactic = -1;

// Who a runner is, across processes: never a pointer or a hash of one.
struct RunnerId {
  std::string name;     // "kiln:rmsnorm", "cublas_gemm"
  std::string version;  // bumped when tactics change meaning
  std::string text() const { return name + "@" + version; }
};

class TunableRunner {
 public:
  virtual ~TunableRunner() = default;
  TunableRunner(const TunableRunner&) = delete;
  TunableRunner& operator=(const TunableRunner&) = delete;

  const RunnerId& id() const { return id_; }
  // A 64-bit digest of id().text(), computed once: the hot path mixes it
  // into the in-memory key instead of hashing strings on every call.
  std::uint64_t id_hash() const { return id_hash_; }

  // The tactics that can serve `inputs` (kFallbackTactic need not be listed;
  // it is always valid). Listing compiles nothing.
  virtual std::vector<int> tactics(const ArgList& inputs) = 0;
  // Runs `tactic` on `inputs` (outputs are among the inputs). Errors are
  // values: a failing tactic is recorded and never chosen.
  virtual Status run(const ArgList& inputs, int tactic) = 0;
  // Optional, never timed: called once per tuning pass, before any of
  // `tactics` is profiled, to compile them or transform weights. Must be
  // idempotent.
  virtual Status prepare(const ArgList& inputs, std::span<const int> tactics) {
    (void)inputs;
    (void)tactics;
    return ok_status();
  }
  // Waits for work run() queued (asynchronous devices); timing brackets it.
  virtual Status synchronize() { return ok_status(); }
  // A readable name for a tactic, stored with persisted decisions: a stored
  // decision whose description no longer matches is stale and not served.
  virtual std::string describe(int tactic) const { return std::to_string(tactic); }

 protected:
  TunableRunner(std::string name, std::string version);

 private:
  RunnerId id_;
  std::uint64_t id_hash_ = 0;
};

}  // namespace kiln
