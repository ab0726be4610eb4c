// One call's arguments copied to the host, so they can be replicated onto
// another device (a second GPU, a benchmark worker in another process):
// each tensor's descriptor and the bytes of its storage span, each scalar's
// value. A benchmark worker measures on its replica, never on the caller's
// tensors.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "kiln/runtime/device.hpp"
#include "kiln/tuner/args.hpp"

namespace kiln::internal {

class HostArgs {
 public:
  // Copies every tensor's storage span from `device` (synchronised).
  static Result<HostArgs> capture(Device& device, const ArgList& args);

  // The descriptors and scalars as JSON; the tensors' bytes appended to
  // `blob` (offsets in the JSON). from_json throws kiln::Error (kCorrupt)
  // naming what is malformed.
  nlohmann::json to_json(std::string* blob) const;
  static HostArgs from_json(const nlohmann::json& json, std::string_view blob);

  // The argument list with tensor data pointers null.
  const ArgList& args() const { return args_; }
  const std::string& bytes(std::size_t i) const { return bytes_.at(i); }

 private:
  ArgList args_;
  std::vector<std::string> bytes_;  // per argument; empty for scalars
};

// Whether `args` can travel to another process: an error naming the raw
// pointer scalar (it means nothing in another address space) and the fix.
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
