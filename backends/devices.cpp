// Devices by reference across the registered backends (backends/backends.cpp).
#include "kiln/backends/devices.hpp"

#include <charconv>
#include <string>

#include "kiln/device/backend.hpp"

namespace kiln {

Result<std::unique_ptr<Device>> open_device(const DeviceRef& ref, int cpu_threads) {
  auto backend = find_backend(ref.kind);
  if (!backend.ok()) {
    return make_error(ErrorCode::kUnavailable,
                      "cannot open " + ref.to_string() + ": " + backend.error().message);
  }
  return (*backend)->open_device(ref.index, cpu_threads);
}

std::vector<DeviceRef> parse_device_list(std::string_view text, DeviceKind bare_kind) {
  std::vector<DeviceRef> out;
  std::size_t begin = 0;
  while (begin <= text.size()) {
    std::size_t end = text.find(',', begin);
    if (end == std::string_view::npos) end = text.size();
    std::string_view item = text.substr(begin, end - begin);
    DeviceRef ref{bare_kind, 0};
    std::string_view number = item;
    if (item.rfind("cuda", 0) == 0 || item.rfind("cpu", 0) == 0) {
      ref.kind = item[1] == 'u' ? DeviceKind::kCuda : DeviceKind::kCpu;
      number = item.substr(ref.kind == DeviceKind::kCuda ? 4 : 3);
      if (number.empty())
        number = "0";
      else if (number[0] == ':')
        number.remove_prefix(1);
      else
        number = "x";
    }
    auto [ptr, ec] = std::from_chars(number.data(), number.data() + number.size(), ref.index);
    if (ec != std::errc() || ptr != number.data() + number.size() || ref.index < 0) {
      throw Error(ErrorCode::kInvalidArgument,
                  "device list '" + std::string(text) + "': '" + std::string(item) +
                      "' is not a device (write cuda:0, cpu, cpu:1 or an index)");
    }
    out.push_back(ref);
    begin = end + 1;
  }
  return out;
}

}  // namespace kiln
