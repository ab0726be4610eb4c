// One call's arguments copied to the host, so they can be replicated onto
// another device (a second GPU, a benchmark worker in another process):
// each tensor's descriptor and the bytes of its storage span, each sized
// raw pointer's bytes, each scalar's value. A benchmark worker measures on
// its replica, never on the caller's memory.
//
// The bytes live in one sealed shared memory file (process/shared_memory.hpp):
// thread workers read it here, worker processes map it from the descriptor
// that travels with the call message, so a call's arguments are copied from
// the caller once, whatever the number of workers.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "kiln/device/device.hpp"
#include "kiln/process/shared_memory.hpp"
#include "kiln/process/worker_protocol.hpp"
#include "kiln/tuner/args.hpp"

namespace kiln::internal {

class HostArgs {
 public:
  // Copies every tensor's storage span and every sized raw pointer's bytes
  // from `device` (synchronised) into shared memory.
  static Result<HostArgs> capture(Device& device, const ArgList& args);

  // The descriptors and scalars as JSON, each argument's bytes as a place
  // in the shared memory, whose descriptor is appended to `message->fds`.
  nlohmann::json to_json(worker::Payload* message) const;
  // kCorrupt naming what is malformed (a span past the memory, a missing
  // or unsealed descriptor).
  static Result<HostArgs> from_json(const nlohmann::json& json, const worker::Payload& message);

  // The argument list with tensor data and sized raw pointers null (a raw
  // pointer of unknown extent, for threads only, stays the caller's).
  const ArgList& args() const { return args_; }
  // Argument i's bytes (empty for a scalar).
  std::string_view bytes(std::size_t i) const;

 private:
  struct Span {
    std::size_t offset = 0, size = 0;
  };
  ArgList args_;
  std::vector<Span> spans_;                     // per argument
  std::shared_ptr<const SharedMemory> memory_;  // null when no argument has bytes
};

// Whether `args` can travel to another process: an error naming the raw
// pointer of unknown extent (its address means nothing in another address
// space and its bytes cannot be copied) and the fixes.
[[nodiscard]] Status can_travel(const ArgList& args);

// The call's arguments in one device's memory: a buffer per tensor, filled
// from the host copy; scalars as they were.
struct ReplicaArgs {
  std::vector<Buffer> buffers;
  ArgList args;
};
Result<ReplicaArgs> replicate(Device& device, const HostArgs& host);

// Doubles as raw bytes and back (reference outputs travel this way).
void append_doubles(const std::vector<double>& values, std::string* blob, nlohmann::json* where);
std::vector<double> read_doubles(const nlohmann::json& where, std::string_view blob);

}  // namespace kiln::internal
