#include "kiln/core/fingerprint.hpp"

#include <nlohmann/json.hpp>

#include "kiln/core/error.hpp"
#include "kiln/core/keys.hpp"

namespace kiln {

Hash128 ToolchainFingerprint::hash() const {
  return Hasher()
      .field("kiln-toolchain-v1")
      .field(kiln_version)
      .field(nvrtc_version)
      .field(llvm_version)
      .field(codegen_hash)
      .finish();
}

nlohmann::json ToolchainFingerprint::to_json() const {
  return {{"kiln_version", kiln_version},
          {"nvrtc_version", nvrtc_version},
          {"llvm_version", llvm_version},
          {"codegen_hash", codegen_hash},
          {"hash", hash().hex()}};
}

ToolchainFingerprint ToolchainFingerprint::from_json(const nlohmann::json& json) {
  auto field = [&](const char* name) {
    if (!json.is_object() || !json.contains(name) || !json[name].is_string()) {
      throw Error(ErrorCode::kInvalidArgument,
                  std::string("toolchain fingerprint JSON lacks string field '") + name + "'");
    }
    return json[name].get<std::string>();
  };
  return ToolchainFingerprint{field("kiln_version"), field("nvrtc_version"), field("llvm_version"),
                              field("codegen_hash")};
}

Hash128 artifact_key(const ToolchainFingerprint& toolchain, std::string_view source,
                     const std::vector<std::string>& options, std::string_view entry,
                     std::string_view arch, const EnvSnapshot& env) {
  Hasher h;
  h.field("kiln-artifact-v1").field(toolchain.hash()).field(source);
  h.field(static_cast<std::int64_t>(options.size()));
  for (const auto& o : options) h.field(o);
  return h.field(entry).field(arch).field(env.hash()).finish();
}

Hash128 tuning_key(const ProblemKey& problem, std::string_view arch,
                   const ToolchainFingerprint& toolchain, const EnvSnapshot& env,
                   const Hash128& definition) {
  return Hasher()
      .field("kiln-tuning-v2")
      .field(problem.canonical())
      .field(arch)
      .field(toolchain.hash())
      .field(env.hash())
      .field(definition)
      .finish();
}

}  // namespace kiln
