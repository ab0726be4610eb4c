// The definition hash of a tunable kernel: what makes a tuning record
// belong to this kernel and no other (docs/caching.md, "Keys").
#include "kiln/tuner/tuner.hpp"

namespace kiln {

Hash128 definition_hash(const TunableKernel& kernel) {
  Hasher h;
  h.field("kiln-definition-v1").field(template_hash(kernel.tmpl));
  // Which outputs are checked and which arguments are restored or zeroed
  // change what a measurement means, so they are part of the kernel.
  for (const auto* list : {&kernel.outputs, &kernel.restore_value, &kernel.reset_to_zero}) {
    h.field(static_cast<std::int64_t>(list->size()));
    for (const auto& name : *list) h.field(name);
  }
  return h.field(static_cast<std::int64_t>(kernel.top_k)).field(kernel.version).finish();
}

}  // namespace kiln
