// Kiln's tuning records in Kernel Tuner's cache file layout: what
// `kiln cache export --format kernel-tuner` writes, so that Kernel Tuner's
// tools (and Kiln's lab replays, lab/) read what Kiln measured.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "kiln/cache/tuning_record.hpp"
#include "kiln/core/error.hpp"

namespace kiln {

// A tuning record's measurements in Kernel Tuner's cache file layout: the
// parameters sorted by name, each measured config under its comma-joined
// values with its time in ms, or "CompilationFailedConfig" /
// "RuntimeFailedConfig" when it failed, with its compile and benchmark
// cost in ms where the record kept them (0 where not, as Kernel Tuner
// says of a cost it did not time). kInvalidArgument when the record has
// no measurements.
Result<nlohmann::json> kernel_tuner_cache(const TuningRecord& record);

// `text` as one gzip member (what `gzip` writes): the export to a FILE
// named .gz.
Result<std::string> gzip_text(std::string_view text);

}  // namespace kiln
