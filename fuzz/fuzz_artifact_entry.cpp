// The artifact-entry reader, both kinds (index entries and programs).
// Promises (lib/cache/entry_format.hpp): any bytes give either the decoded
// views, inside the input, or kCorrupt with a reason; never an exception, a
// crash or a read outside the input. An entry the encoder wrote decodes to
// exactly what went in, and only under its own name.
#include <algorithm>
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
  using kiln::cache::EntryKind;
  using kiln::fuzz::check;
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  try {
    // The name the header claims, so the checks past the name are reached too.
    kiln::Hash128 name{read_u64(bytes, 16), read_u64(bytes, 24)};
    for (EntryKind kind : {EntryKind::kIndex, EntryKind::kProgram}) {
      auto decoded = kiln::cache::decode_entry(bytes, kind, name);
      if (decoded.ok()) {
        check(inside(decoded->meta_json, bytes) && inside(decoded->payload, bytes),
              "decoded views point outside the input", bytes);
      } else {
        check(decoded.error().code == kiln::ErrorCode::kCorrupt, "a refusal that is not kCorrupt",
              bytes);
      }
    }
    (void)kiln::cache::peek_program(
        bytes.substr(0, std::min(bytes.size(), kiln::cache::kEntryHeaderSize)));
    // Round trips: the input split into metadata and payload.
    std::size_t cut = size / 3;
    std::string_view meta = bytes.substr(0, cut), payload = bytes.substr(cut);
    const kiln::Hash128 program = kiln::cache::program_hash(payload);
    std::string index = kiln::cache::encode_index(name, program, meta);
    auto back = kiln::cache::decode_entry(index, EntryKind::kIndex, name);
    check(back.ok(), "an index entry the encoder wrote is refused", bytes);
    check(back->meta_json == meta && back->program == program,
          "an index entry changed in a round trip", bytes);
    kiln::Hash128 other{name.high ^ 1, name.low};
    check(!kiln::cache::decode_entry(index, EntryKind::kIndex, other).ok(),
          "an index entry served under another key", bytes);
    check(!kiln::cache::decode_entry(index, EntryKind::kProgram, name).ok(),
          "an index entry read as a program", bytes);
    std::string prog = kiln::cache::encode_program(payload);
    auto body = kiln::cache::decode_entry(prog, EntryKind::kProgram, program);
    check(body.ok() && body->payload == payload, "a program changed in a round trip", bytes);
    check(!kiln::cache::decode_entry(prog, EntryKind::kProgram, other).ok(),
          "a program served under another name", bytes);
  } catch (const std::exception& e) {
    kiln::fuzz::broken(std::string("exception escaped the reader: ") + e.what(), bytes);
  }
  return 0;
}
