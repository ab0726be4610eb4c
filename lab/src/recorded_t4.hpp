// Kernel Tuner's T4 output layout (`store_output_file`, the *_T4.json files
// of the AutoTuningAssociation benchmark hub) as its cache file layout, so
// that one reader (recorded_space.cpp) checks both.
//
// A T4 file is {"schema_version", "results": [{"configuration": {...},
// "times": {"compilation", "benchmark"?, "runtimes", ...}, "invalidity":
// "correct" | "compile" | "runtime" | "constraints", "measurements":
// [{"name": "time", "value", "unit"}, ...], "objectives": ["time"]}, ...],
// "metadata"?}. The results' objective (one for the file) and each working
// result's figure for it carry over as the cache layout's. It names
// no parameter lists, device or kernel: the lists are the values the
// configurations take, sorted when they are all numbers or all text.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "kiln/core/error.hpp"

namespace kiln::detail {

// Whether `j` (parsed without key order) has T4's shape rather than the
// cache layout's: a "results" array and no "cache".
bool is_t4_output(const nlohmann::json& j);

// The same file's text in the cache layout. `text` is parsed again keeping
// key order, since a configuration's key order is the parameter order the
// cache layout's "tune_params_keys" gives. `where` names the file in errors,
// each of which says which result is wrong and how.
Result<nlohmann::json> t4_as_cache_layout(std::string_view text, const std::string& where);
// The same from a T4 file already parsed with its key order (KTT's reader
// builds one: recorded_ktt.cpp).
Result<nlohmann::json> t4_as_cache_layout(const nlohmann::ordered_json& j,
                                          const std::string& where);

}  // namespace kiln::detail
