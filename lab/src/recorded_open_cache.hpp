// A Kernel Tuner cache file left open. Kernel Tuner writes its cache file's
// header without the two closing braces and appends one record a line,
// each followed by a comma ("\n\"key\": {...},"), closing the file only when
// tuning ends; its own reader accepts a file a run left open, and so does
// Kiln's (recorded_space.cpp). A record cut off mid-line by a killed run is
// dropped, not read as a different record.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kiln::detail {

// `text` closed as Kernel Tuner would close it, to be parsed in this order
// until one parses: the trailing comma dropped and the braces added (a file
// left open between records, or whose last record lacks only its comma);
// then everything after the last record that ends its line dropped first
// (a record cut off mid-line). Empty when `text` is not an open cache file:
// it has no "cache" object, or it is closed already, so that a parse error
// in it is real and reported as such.
std::vector<std::string> closed_cache_texts(std::string_view text);

}  // namespace kiln::detail
