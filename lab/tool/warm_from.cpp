// read_warm_from and warm_from_for: see warm_from.hpp.
#include "warm_from.hpp"

#include <filesystem>
#include <system_error>

namespace kiln::tool {

Result<std::vector<RecordedSpace>> read_warm_from(const std::vector<std::string>& files) {
  std::vector<RecordedSpace> out;
  for (const std::string& path : files) {
    Result<RecordedSpace> space = read_recorded_space(path);
    if (!space)
      return make_error(ErrorCode::kInvalidArgument, "--warm-from: " + space.error().message);
    out.push_back(std::move(*space));
  }
  return out;
}

WarmFrom warm_from_for(const RecordedSpace& target, const std::vector<RecordedSpace>& warm) {
  WarmFrom out;
  const DeviceIdentity device = recorded_device(target);
  for (const RecordedSpace& w : warm) {
    const std::string path = w.path.string();
    std::error_code ec;
    if (std::filesystem::equivalent(w.path, target.path, ec)) {
      out.left_out.push_back(path + ": the replayed file itself");
    } else if (recorded_device(w) == device) {
      out.left_out.push_back(path + ": recorded on the replayed device (" + device.name +
                             "): its fastest config is the answer, not a warm start");
    } else if (w.kernel != target.kernel) {
      out.left_out.push_back(path + ": another kernel (" + w.kernel + ", not " + target.kernel +
                             ")");
    } else {
      out.records.push_back(recorded_record(w));
      out.used.push_back(path);
    }
  }
  return out;
}

}  // namespace kiln::tool
