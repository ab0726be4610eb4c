// A recorded space inside a zip archive. The benchmark hub ships KTT's
// output files zipped (its KTT data folder holds each one as .zip and as
// .json.gz), and a file downloaded from a results page often arrives as a
// zip: read_recorded_space() takes the archive itself, as it takes gzip.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "kiln/core/error.hpp"

namespace kiln::detail {

// Whether `bytes` begin as a zip archive does (a local file header, or the
// end record of an empty archive).
bool looks_like_zip(std::string_view bytes);

// Whether this build reads zip archives (it was built with libzip).
bool zip_supported();

// The one file `archive` (the bytes of `path`) holds, uncompressed. Folder
// entries and macOS's __MACOSX/ resource forks do not count. kInvalidArgument
// naming the members when there are several or none, kCorrupt when the
// archive or its member does not read whole, kUnavailable naming the fix
// when this Kiln was built without libzip.
Result<std::string> zip_single_member(std::string_view archive, const std::filesystem::path& path);

}  // namespace kiln::detail
