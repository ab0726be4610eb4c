// Devices by reference across the registered backends (backends/backends.cpp).
#include "kiln/backends/devices.hpp"

#include <cctype>
#include <charconv>
#include <string>

#include "kiln/device/backend.hpp"

namespace kiln {

Result<std::unique_ptr<Device>> open_device(const DeviceRef& ref, int cpu_threads) {
  auto backend = find_backend(ref.backend);
  if (!backend.ok()) {
    return make_error(ErrorCode::kUnavailable,
                      "cannot open " + ref.to_string() + ": " + backend.error().message);
  }
  return (*backend)->open_device(ref.index, cpu_threads);
}

namespace {

[[noreturn]] void not_a_device(std::string_view text, std::string_view item, std::string why) {
  throw Error(ErrorCode::kInvalidArgument, "device list '" + std::string(text) + "': '" +
                                               std::string(item) + "' " + why +
                                               " (write cuda:0, cpu, cpu:1 or an index)");
}

// "cuda:1" -> {"cuda", 1}; "cuda" -> {"cuda", 0}; "1" -> {bare, 1}.
DeviceRef parse_device(std::string_view text, std::string_view item,
                       const std::string& bare_backend) {
  std::size_t letters = 0;
  while (letters < item.size() &&
         (std::isalpha(static_cast<unsigned char>(item[letters])) || item[letters] == '_'))
    ++letters;
  DeviceRef ref{bare_backend, 0};
  std::string_view number = item;
  if (letters > 0) {
    ref.backend = std::string(item.substr(0, letters));
    if (!is_backend_name(ref.backend)) not_a_device(text, item, "names no backend");
    number = item.substr(letters);
    if (number.empty())
      number = "0";
    else if (number[0] == ':')
      number.remove_prefix(1);
    else
      number = "x";
  }
  auto [ptr, ec] = std::from_chars(number.data(), number.data() + number.size(), ref.index);
  if (ec != std::errc() || ptr != number.data() + number.size() || ref.index < 0)
    not_a_device(text, item, "is not a device");
  return ref;
}

}  // namespace

std::vector<DeviceRef> parse_device_list(std::string_view text, const std::string& bare_backend) {
  std::vector<DeviceRef> out;
  std::size_t begin = 0;
  while (begin <= text.size()) {
    std::size_t end = text.find(',', begin);
    if (end == std::string_view::npos) end = text.size();
    out.push_back(parse_device(text, text.substr(begin, end - begin), bare_backend));
    begin = end + 1;
  }
  return out;
}

}  // namespace kiln
