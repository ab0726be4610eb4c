// Toolchain fingerprint: everything about Kiln and the one backend's
// compiler that can change generated code. Part of every artifact and tuning
// key, so an upgrade of Kiln or of that compiler can never serve an old
// binary or winner, while upgrading NVRTC leaves CPU keys alone and
// upgrading LLVM leaves CUDA keys alone (each backend adds only its part:
// kiln/device/backend.hpp).
#pragma once

#include <string>

#include <nlohmann/json_fwd.hpp>

#include "kiln/core/hash.hpp"

namespace kiln {

struct ToolchainFingerprint {
  std::string kiln_version;  // "0.1.0"
  std::string codegen_hash;  // hash of templates/ and code-generating sources, at build time
  // The backend the keyed code is for ("cpu", "cuda"); empty for code no
  // backend compiles (a framework's own runners).
  std::string backend;
  // That backend's part: its compiler and version ("llvm 19.1.7",
  // "nvrtc 13.0"), or "absent" when it cannot be loaded.
  std::string compiler;

  // This build's Kiln version and codegen hash with `backend`'s part.
  static ToolchainFingerprint of(std::string backend, std::string compiler);

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
