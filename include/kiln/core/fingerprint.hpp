// Toolchain fingerprint: everything about the compilers and Kiln itself that
// can change generated code. Part of every artifact and tuning key, so an
// upgrade of CUDA, LLVM or Kiln can never serve an old binary or winner.
#pragma once

#include <string>

#include <nlohmann/json_fwd.hpp>

#include "kiln/core/hash.hpp"

namespace kiln {

struct ToolchainFingerprint {
  std::string kiln_version;   // "0.1.0"
  std::string nvrtc_version;  // "13.0", or "absent"
  std::string llvm_version;   // "19.1.7", or "absent"
  std::string codegen_hash;   // hash of templates/ and code-generating sources, at build time

  Hash128 hash() const;
  nlohmann::json to_json() const;  // the parts and "hash"
  static ToolchainFingerprint from_json(const nlohmann::json& json);
  bool operator==(const ToolchainFingerprint&) const = default;
};

// Kiln's version, from the CMake project.
const char* kiln_version();
// Hash of the sources that shape generated code, computed by the build.
const char* kiln_codegen_hash();
// The list of files that hash covered, relative to the source tree, one per line.
const char* kiln_codegen_files();

}  // namespace kiln
