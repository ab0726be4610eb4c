// The backend-independent parts of include/kiln/device/device.hpp.
#include "kiln/device/device.hpp"

#include "kiln/core/checked_math.hpp"
#include "kiln/core/error.hpp"

namespace kiln {

std::string Dim3::to_string() const {
  return "(" + std::to_string(x) + "," + std::to_string(y) + "," + std::to_string(z) + ")";
}

std::uint32_t grid_extent(std::int64_t items, std::int64_t per_block, std::string_view what) {
  if (items < 0 || per_block < 1) {
    throw Error(ErrorCode::kInvalidArgument,
                std::string(what) + ": " + std::to_string(items) + " items in blocks of " +
                    std::to_string(per_block) + " (items must be >= 0, blocks >= 1)");
  }
  const auto blocks = checked_narrow<std::uint32_t>(ceil_div_nonneg(items, per_block));
  if (!blocks) {
    throw Error(ErrorCode::kInvalidArgument, std::string(what) + ": " + std::to_string(items) +
                                                 " items in blocks of " +
                                                 std::to_string(per_block) + " need " +
                                                 std::to_string(ceil_div_nonneg(items, per_block)) +
                                                 " blocks, more than a grid extent holds (2^32-1)");
  }
  return *blocks;
}

const char* arg_type_name(ArgType type) {
  switch (type) {
    case ArgType::kPointer:
      return "ptr";
    case ArgType::kBool:
      return "bool";
    case ArgType::kI32:
      return "i32";
    case ArgType::kU32:
      return "u32";
    case ArgType::kI64:
      return "i64";
    case ArgType::kU64:
      return "u64";
    case ArgType::kF32:
      return "f32";
    case ArgType::kF64:
      return "f64";
  }
  return "?";
}

std::vector<void*> KernelArgs::param_pointers() const {
  std::vector<void*> out;
  out.reserve(slots_.size());
  // CUDA reads sizeof(parameter) bytes from each address; the slot holds the
  // value in its low bytes, so one 8-byte slot serves every argument width.
  for (const Slot& s : slots_) out.push_back(const_cast<std::uint64_t*>(&s.bits));
  return out;
}

std::string KernelArgs::signature() const {
  std::string out = "(";
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    if (i) out += ", ";
    out += arg_type_name(slots_[i].type);
  }
  return out + ")";
}

void DeviceHandle::check_owner(const Device& device, const char* what) const {
  if (!state_) {
    throw Error(ErrorCode::kInvalidArgument,
                std::string("empty ") + what +
                    " handle (moved from or default-constructed): create it with the device first");
  }
  if (state_->owner != &device) {
    throw Error(ErrorCode::kInvalidArgument,
                std::string(what) + " belongs to " +
                    (state_->owner ? state_->owner->properties().ref.to_string() : "no device") +
                    ", not to " + device.properties().ref.to_string() +
                    ": create it on the device it is used with");
  }
}

void DeviceHandle::throw_wrong_backend(const char* what) {
  throw Error(ErrorCode::kInternal,
              std::string(what) + " state is of another backend's type (broken invariant)");
}

Result<Stream> Device::wrap_stream(std::uintptr_t /*native*/) {
  return make_error(ErrorCode::kUnavailable,
                    properties().ref.to_string() +
                        " cannot launch on a caller's stream: use a stream it creates "
                        "(create_stream) or the default stream");
}

ErrorInfo launch_error(const LoadedKernel& kernel, const LaunchConfig& config,
                       const std::string& reason, ErrorCode code) {
  std::string message = "launch of kernel " + kernel.name() + " [" + kernel.config() +
                        "] failed: grid " + config.grid.to_string() + " block " +
                        config.block.to_string() + " shared memory " +
                        std::to_string(config.shared_bytes) + " bytes: " + reason;
  return make_error(code, std::move(message),
                    {{"kernel", kernel.name()},
                     {"config", kernel.config()},
                     {"grid", config.grid.to_string()},
                     {"block", config.block.to_string()},
                     {"shared_bytes", std::to_string(config.shared_bytes)},
                     {"reason", reason}});
}

}  // namespace kiln
