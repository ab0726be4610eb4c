// The state of one call's arguments during tuning: snapshots of the
// restore_value arguments (taken once, before anything runs), the zeroing
// of reset_to_zero arguments, and reading outputs back for comparison.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "kiln/device/device.hpp"
#include "kiln/tuner/args.hpp"
#include "kiln/tuner/tuner.hpp"

namespace kiln::internal {

class CallState {
 public:
  // Snapshots every restore_value argument from `device`. Throws kiln::Error
  // when a listed name is not an argument or not a tensor.
  static Result<CallState> capture(Device& device, const TunableKernel& kernel,
                                   const ArgList& args);

  // Points the state at a copy of the argument list it was captured from
  // (same names and addresses), so the copy's owner can outlive the original.
  void rebind(const ArgList* args) { args_ = args; }

  // Before a run: restore snapshots, zero reset_to_zero arguments; with
  // `fresh_outputs` (a checked run) the outputs get their first contents too.
  Status prepare(Device& device, Stream* stream = nullptr, bool fresh_outputs = false) const;
  // After tuning: restore snapshots and the outputs' first contents, but
  // leave reset_to_zero arguments as the caller has them (the real call
  // zeroes them itself), so tuning leaves no trace in the caller's memory.
  Status restore(Device& device) const;
  // Zeroes reset_to_zero arguments only (the real call).
  Status reset(Device& device, Stream* stream = nullptr) const;
  // The outputs, widened to double, by name.
  Result<std::map<std::string, std::vector<double>>> read_outputs(Device& device) const;

  const std::vector<std::string>& outputs() const { return outputs_; }
  DType output_dtype(const std::string& name) const;

 private:
  const ArgList* args_ = nullptr;
  std::map<std::string, std::string> snapshots_;         // name -> bytes of its storage span
  std::map<std::string, std::string> output_snapshots_;  // outputs not in snapshots_
  std::vector<std::string> reset_;
  std::vector<std::string> outputs_;
};

}  // namespace kiln::internal
