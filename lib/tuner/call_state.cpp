#include "call_state.hpp"

#include "kiln/core/error.hpp"
#include "kiln/tuner/compare.hpp"

namespace kiln::internal {

namespace {
// restore_value and reset_to_zero take what has storage: tensors and raw
// pointers of known extent; outputs are compared element by element, so
// they must be tensors (a dtype and a shape).
const Arg& listed_arg(const ArgList& args, const std::string& name, const char* list,
                      bool tensor_only = false) {
  const Arg& a = find_arg(args, name);
  if (a.is_tensor || (!tensor_only && a.has_storage())) return a;
  if (a.is_pointer() && tensor_only) {
    throw Error(ErrorCode::kInvalidArgument,
                std::string(list) + " names '" + name +
                    "', a raw pointer: outputs are compared element by element, so give it as a "
                    "tensor (Arg::of_tensor with its dtype and shape)");
  }
  if (a.is_pointer()) {
    throw Error(ErrorCode::kInvalidArgument,
                std::string(list) + " names '" + name +
                    "', a raw pointer of unknown extent: give its size in bytes "
                    "(Arg::of_pointer(name, address, bytes)) or pass it as a tensor");
  }
  throw Error(ErrorCode::kInvalidArgument, std::string(list) + " names '" + name +
                                               "', which is a scalar: only tensors can be listed");
}
}  // namespace

Result<CallState> CallState::capture(Device& device, const TunableKernel& kernel,
                                     const ArgList& args) {
  CallState s;
  s.args_ = &args;
  for (const auto& name : kernel.restore_value) {
    const Arg& a = listed_arg(args, name, "restore_value");
    std::string bytes(a.storage_bytes(), '\0');
    if (!bytes.empty()) {
      Status st = device.copy_to_host(bytes.data(), a.address(), bytes.size());
      if (!st.ok()) return st.error();
    }
    s.snapshots_.emplace(name, std::move(bytes));
  }
  for (const auto& name : kernel.reset_to_zero) {
    listed_arg(args, name, "reset_to_zero");
    s.reset_.push_back(name);
  }
  for (const auto& name : kernel.outputs) {
    const Arg& a = listed_arg(args, name, "outputs", /*tensor_only=*/true);
    s.outputs_.push_back(name);
    // NOTES: a checked run starts from the outputs' first contents, not from
    // what the previous config left there: otherwise a config that writes
    // nothing passes as long as a right one ran before it.
    if (s.snapshots_.count(name) != 0 || a.storage_bytes() == 0) continue;
    std::string bytes(a.storage_bytes(), '\0');
    Status st = device.copy_to_host(bytes.data(), a.data, bytes.size());
    if (!st.ok()) return st.error();
    s.output_snapshots_.emplace(name, std::move(bytes));
  }
  Status sync = device.synchronize();
  if (!sync.ok()) return sync.error();
  return s;
}

Status CallState::prepare(Device& device, Stream* stream, bool fresh_outputs) const {
  if (fresh_outputs) {
    for (const auto& [name, bytes] : output_snapshots_) {
      Status st = device.copy_to_device(find_arg(*args_, name).address(), bytes.data(),
                                        bytes.size(), stream);
      if (!st.ok()) return st;
    }
  }
  for (const auto& [name, bytes] : snapshots_) {
    if (bytes.empty()) continue;
    Status st =
        device.copy_to_device(find_arg(*args_, name).address(), bytes.data(), bytes.size(), stream);
    if (!st.ok()) return st;
  }
  return reset(device, stream);
}

Status CallState::restore(Device& device) const {
  for (const auto* saved : {&output_snapshots_, &snapshots_}) {
    for (const auto& [name, bytes] : *saved) {
      if (bytes.empty()) continue;
      Status st = device.copy_to_device(find_arg(*args_, name).address(), bytes.data(),
                                        bytes.size(), nullptr);
      if (!st.ok()) return st;
    }
  }
  return ok_status();
}

Status CallState::reset(Device& device, Stream* stream) const {
  for (const auto& name : reset_) {
    const Arg& a = find_arg(*args_, name);
    if (a.storage_bytes() == 0) continue;
    Status st = device.fill(a.address(), 0, a.storage_bytes(), stream);
    if (!st.ok()) return st;
  }
  return ok_status();
}

DType CallState::output_dtype(const std::string& name) const {
  return find_arg(*args_, name).tensor.dtype;
}

Result<std::map<std::string, std::vector<double>>> CallState::read_outputs(Device& device) const {
  std::map<std::string, std::vector<double>> out;
  for (const auto& name : outputs_) {
    const Arg& a = find_arg(*args_, name);
    std::string bytes(a.storage_bytes(), '\0');
    if (!bytes.empty()) {
      Status st = device.copy_to_host(bytes.data(), a.data, bytes.size());
      if (!st.ok()) return st.error();
    }
    out.emplace(name,
                to_double(a.tensor.dtype, bytes.data(), bytes.size() / dtype_size(a.tensor.dtype)));
  }
  return out;
}

}  // namespace kiln::internal
