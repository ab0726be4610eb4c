#include "kiln/core/fingerprint.hpp"

#include <nlohmann/json.hpp>

#include "kiln/core/error.hpp"
#include "kiln/core/keys.hpp"

namespace kiln {

ToolchainFingerprint ToolchainFingerprint::of(std::string backend, std::string compiler) {
  return ToolchainFingerprint{::kiln::kiln_version(), ::kiln::kiln_codegen_hash(),
                              std::move(backend), std::move(compiler)};
}

// v2: one backend's compiler instead of every backend's (v1 held the NVRTC
// and the LLVM version in every key).
Hash128 ToolchainFingerprint::hash() const {
  return Hasher()
      .field("kiln-toolchain-v2")
      .field(kiln_version)
      .field(codegen_hash)
      .field(backend)
      .field(compiler)
      .finish();
}

nlohmann::json ToolchainFingerprint::to_json() const {
  return {{"kiln_version", kiln_version},
          {"codegen_hash", codegen_hash},
          {"backend", backend},
          {"compiler", compiler},
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
  return ToolchainFingerprint{field("kiln_version"), field("codegen_hash"), field("backend"),
                              field("compiler")};
}

Hash128 artifact_key(const ToolchainFingerprint& toolchain, std::string_view source,
                     const std::vector<std::string>& options, std::string_view entry,
                     std::string_view arch, const EnvSnapshot& env) {
  Hasher h;
  h.field("kiln-artifact-v2").field(toolchain.hash()).field(source);
  h.field(static_cast<std::int64_t>(options.size()));
  for (const auto& o : options) h.field(o);
  return h.field(entry).field(arch).field(env.hash()).finish();
}

Hash128 tuning_key(const ProblemKey& problem, std::string_view arch,
                   const ToolchainFingerprint& toolchain, const EnvSnapshot& env,
                   const Hash128& definition) {
  return Hasher()
      .field("kiln-tuning-v3")
      .field(problem.canonical())
      .field(arch)
      .field(toolchain.hash())
      .field(env.hash())
      .field(definition)
      .finish();
}

}  // namespace kiln
