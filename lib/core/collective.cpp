// The names of the distributed strategies (kiln/core/collective.hpp).
#include "kiln/core/collective.hpp"

namespace kiln {

const char* distributed_strategy_name(DistributedStrategy strategy) {
  switch (strategy) {
    case DistributedStrategy::kIndependent:
      return "independent";
    case DistributedStrategy::kBroadcast:
      return "broadcast";
    case DistributedStrategy::kParallel:
      return "parallel";
    case DistributedStrategy::kMerge:
      return "merge";
  }
  return "?";
}

Result<DistributedStrategy> parse_distributed_strategy(std::string_view name) {
  for (auto s : {DistributedStrategy::kIndependent, DistributedStrategy::kBroadcast,
                 DistributedStrategy::kParallel, DistributedStrategy::kMerge}) {
    if (name == distributed_strategy_name(s)) return s;
  }
  return make_error(ErrorCode::kInvalidArgument,
                    "unknown distributed strategy \"" + std::string(name) +
                        "\"; use independent, broadcast, parallel or merge");
}

}  // namespace kiln
