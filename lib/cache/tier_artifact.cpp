// An artifact as every cache tier holds it (kiln/cache/cache_tier.hpp).
#include <nlohmann/json.hpp>

#include "kiln/cache/artifact_cache.hpp"
#include "kiln/cache/cache_tier.hpp"

namespace kiln {

std::string encode_tier_artifact(const CachedArtifact& artifact) {
  const std::string meta = artifact.meta.dump();
  std::string out;
  const std::uint64_t size = meta.size();
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((size >> (8 * i)) & 0xff));
  out += meta;
  out += artifact.binary;
  return out;
}

Result<CachedArtifact> decode_tier_artifact(const std::string& payload) {
  if (payload.size() < 8) return make_error(ErrorCode::kCorrupt, "artifact payload too short");
  std::uint64_t size = 0;
  for (int i = 7; i >= 0; --i) size = (size << 8) | static_cast<unsigned char>(payload[i]);
  if (size > payload.size() - 8)
    return make_error(ErrorCode::kCorrupt, "artifact payload's metadata size is out of range");
  CachedArtifact artifact;
  artifact.meta = nlohmann::json::parse(payload.substr(8, size), nullptr, false);
  if (artifact.meta.is_discarded() || !artifact.meta.is_object())
    return make_error(ErrorCode::kCorrupt, "artifact payload's metadata is not a JSON object");
  artifact.binary = payload.substr(8 + size);
  artifact.program = hash128(artifact.binary);
  return artifact;
}

}  // namespace kiln
