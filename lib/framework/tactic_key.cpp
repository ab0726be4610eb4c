// The two keys of a choose_one decision.
#include "tactic_key.hpp"

#include <xxhash.h>

#include <cstring>

#include "kiln/core/error.hpp"

namespace kiln::internal {

void KeyMixer::fold() {
  XXH128_hash_t h = XXH3_128bits(words_, sizeof words_);
  words_[0] = h.low64;
  words_[1] = h.high64;
  n_ = 2;
}

TacticKey KeyMixer::finish() const {
  XXH128_hash_t h = XXH3_128bits(words_, n_ * sizeof(std::uint64_t));
  return TacticKey{h.low64, h.high64};
}

void KeyMixer::add_bytes(std::string_view bytes) {
  std::size_t i = 0;
  for (; i + 8 <= bytes.size(); i += 8) {
    std::uint64_t w;
    std::memcpy(&w, bytes.data() + i, 8);
    add(w);
  }
  std::uint64_t tail = 0;
  std::memcpy(&tail, bytes.data() + i, bytes.size() - i);
  add(tail ^ (std::uint64_t{bytes.size()} << 56));
}

std::uint64_t digest64(std::string_view bytes) {
  KeyMixer m;
  m.add_bytes(bytes);
  return m.finish().a;
}

namespace {

// The extent of dim `d` of tensor input `i` under the profile.
std::int64_t extent(const ArgList& inputs, std::size_t i, std::size_t d, const TuningSpec& spec,
                    std::span<const std::int64_t> profile) {
  for (std::size_t j = 0; j < spec.dynamic.size(); ++j) {
    if (spec.dynamic[j].input == i && spec.dynamic[j].dim == d) return profile[j];
  }
  for (const auto& c : spec.constraints) {
    if (c.input == i && c.dim == d) return c.infer(profile);
  }
  return inputs[i].tensor.shape[d];
}

}  // namespace

TacticKey key_under(std::string_view op, std::span<TunableRunner* const> runners,
                    const ArgList& inputs, const TuningSpec& spec,
                    std::span<const std::int64_t> profile) {
  KeyMixer m;
  m.add_bytes(op);
  m.add(runners.size());
  for (const TunableRunner* r : runners) m.add(r->id_hash());
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const Arg& a = inputs[i];
    if (!a.is_tensor) continue;
    const auto& shape = a.tensor.shape;
    m.add((std::uint64_t{i} << 32) |
          (std::uint64_t{static_cast<std::uint8_t>(a.tensor.dtype)} << 8) | shape.size());
    if (spec.dynamic.empty() && spec.constraints.empty()) {
      for (std::int64_t e : shape) m.add(static_cast<std::uint64_t>(e));  // the common case
      continue;
    }
    for (std::size_t d = 0; d < shape.size(); ++d) {
      m.add(static_cast<std::uint64_t>(extent(inputs, i, d, spec, profile)));
    }
  }
  return m.finish();
}

std::string persisted_name(std::string_view op, std::span<TunableRunner* const> runners) {
  std::string name(op);
  for (const TunableRunner* r : runners) name += "|" + r->id().text();
  return name;
}

ProblemKey persisted_problem(std::string_view op, std::span<TunableRunner* const> runners,
                             const ArgList& inputs, const TuningSpec& spec,
                             std::span<const std::int64_t> profile) {
  ProblemKey key(persisted_name(op, runners));
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const Arg& a = inputs[i];
    if (!a.is_tensor) continue;
    std::vector<std::int64_t> shape(a.tensor.shape.size());
    for (std::size_t d = 0; d < shape.size(); ++d) shape[d] = extent(inputs, i, d, spec, profile);
    // Profiles are generated contiguous: the stride pattern stays out.
    key.tensor(a.name.empty() ? "#" + std::to_string(i) : a.name,
               TensorArg::contiguous(a.tensor.dtype, std::move(shape)));
  }
  return key;
}

}  // namespace kiln::internal
