// The artifact-entry reader. Promises (lib/cache/entry_format.hpp): any bytes
// give either the decoded views, inside the input, or kCorrupt with a
// reason; never an exception, a crash or a read outside the input. An entry
// the encoder wrote decodes to exactly what went in.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <string>
#include <string_view>

#include "entry_format.hpp"
#include "fuzz_check.hpp"

namespace {

std::uint64_t read_u64(std::string_view bytes, std::size_t at) {
  std::uint64_t v = 0;
  if (bytes.size() >= at + 8) std::memcpy(&v, bytes.data() + at, 8);
  return v;
}

bool inside(std::string_view part, std::string_view whole) {
  return part.empty() ||
         (part.data() >= whole.data() && part.data() + part.size() <= whole.data() + whole.size());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using kiln::fuzz::check;
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  try {
    // The key the header claims, so the checks past the key are reached too.
    kiln::Hash128 key{read_u64(bytes, 16), read_u64(bytes, 24)};
    auto decoded = kiln::cache::decode_entry(bytes, key);
    if (decoded.ok()) {
      check(inside(decoded->meta_json, bytes) && inside(decoded->payload, bytes),
            "decoded views point outside the input", bytes);
    } else {
      check(decoded.error().code == kiln::ErrorCode::kCorrupt, "a refusal that is not kCorrupt",
            bytes);
    }
    // Round trip: the input split into metadata and payload.
    std::size_t cut = size / 3;
    std::string_view meta = bytes.substr(0, cut), payload = bytes.substr(cut);
    std::string entry = kiln::cache::encode_entry(key, meta, payload);
    auto back = kiln::cache::decode_entry(entry, key);
    check(back.ok(), "an entry the encoder wrote is refused", bytes);
    check(back->meta_json == meta && back->payload == payload, "an entry changed in a round trip",
          bytes);
    kiln::Hash128 other{key.high ^ 1, key.low};
    check(!kiln::cache::decode_entry(entry, other).ok(), "an entry served under another key",
          bytes);
  } catch (const std::exception& e) {
    kiln::fuzz::broken(std::string("exception escaped the reader: ") + e.what(), bytes);
  }
  return 0;
}
