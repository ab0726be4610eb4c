// The content hash of a kernel template: its part of the definition hash
// that enters the tuning key (kiln/tuner/tuner.hpp, definition_hash).
#include <nlohmann/json.hpp>

#include "include_digest.hpp"
#include "kiln/compile/kernel.hpp"

namespace kiln {

Hash128 template_hash(const KernelTemplate& t) {
  // NOTES: every list is preceded by its length, so moving an item from one
  // list to the next (an option becoming a define) changes the hash.
  Hasher h;
  h.field("kiln-template-v1").field(t.source).field(t.entry);
  h.field(static_cast<std::int64_t>(t.defines.size()));
  for (const auto& [name, value] : t.defines) h.field(name).field(value);
  h.field(static_cast<std::int64_t>(t.options.size()));
  for (const auto& o : t.options) h.field(o);
  h.field(static_cast<std::int64_t>(t.headers.size()));
  for (const auto& header : t.headers) h.field(header.name).field(header.content);
  h.field(static_cast<std::int64_t>(t.include_dirs.size()));
  // Headers on disk count by content, as they do in the artifact key.
  if (!t.include_dirs.empty()) h.field(internal::include_dirs_digest(t.include_dirs));
  // nlohmann's dump sorts object keys: the same space gives the same text.
  return h.field(t.space.to_json().dump()).finish();
}

}  // namespace kiln
