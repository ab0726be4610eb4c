// The tuning-cache file reader. Promises (lib/cache/tuning_file.hpp): any
// text gives a value, never an exception or a crash; a malformed record is
// skipped and named, never fatal to its neighbours; what was read survives
// a write and a second read unchanged.
#include <cstddef>
#include <cstdint>
#include <exception>
#include <string_view>

#include "fuzz_check.hpp"
#include "tuning_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using kiln::fuzz::check;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    auto file = kiln::cache::parse_tuning_file(text, "fuzz/tuning.json");
    if (!file.ok()) {
      check(!file.error().message.empty(), "a refusal without a reason", text);
      return 0;
    }
    std::string again = kiln::cache::serialize_tuning_file(*file);
    auto reread = kiln::cache::parse_tuning_file(again, "fuzz/tuning.json");
    check(reread.ok(), "a file the writer wrote is refused by the reader", text);
    check(reread->records.size() == file->records.size(), "records lost in a write and read", text);
    check(reread->problems.empty(), "the writer wrote a record the reader skips", text);
    for (const auto& [id, record] : file->records) {
      auto it = reread->records.find(id);
      check(it != reread->records.end(), "a record id changed in a write and read", text);
      check(it->second.to_json() == record.to_json(), "a record changed in a write and read", text);
    }
  } catch (const std::exception& e) {
    kiln::fuzz::broken(std::string("exception escaped the reader: ") + e.what(), text);
  }
  return 0;
}
