// Output tensors back to the host as doubles.
#include "read_outputs.hpp"

#include <cstring>

#include "kiln/tuner/compare.hpp"

namespace kiln::internal {

Result<std::vector<std::vector<double>>> read_outputs(const ArgList& args,
                                                      const std::vector<std::string>& names,
                                                      Device* device) {
  std::vector<std::vector<double>> out;
  for (const auto& name : names) {
    const Arg& a = find_arg(args, name);
    std::vector<std::byte> host(a.storage_bytes());
    if (device) {
      Status st = device->copy_to_host(host.data(), a.data, host.size());
      if (!st.ok()) return st.error();
    } else if (!host.empty()) {
      std::memcpy(host.data(), a.data, host.size());
    }
    out.push_back(to_double(a.tensor.dtype, host.data(), host.size() / dtype_size(a.tensor.dtype)));
  }
  return out;
}

}  // namespace kiln::internal
