// TunableRunner's identity: hashed once, at construction.
#include "kiln/framework/runner.hpp"

#include "kiln/core/error.hpp"
#include "tactic_key.hpp"

namespace kiln {

TunableRunner::TunableRunner(std::string name, std::string version)
    : id_{std::move(name), std::move(version)} {
  if (id_.name.empty() || id_.name.find('|') != std::string::npos ||
      id_.version.find('|') != std::string::npos) {
    throw Error(ErrorCode::kInvalidArgument, "a runner needs a non-empty name without '|' (got '" +
                                                 id_.name + "@" + id_.version +
                                                 "'): the name keys persisted decisions");
  }
  id_hash_ = internal::digest64(id_.text());
}

}  // namespace kiln
