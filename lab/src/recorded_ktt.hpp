// The Kernel Tuning Toolkit's (KTT) output file as Kernel Tuner's cache
// file layout, so that one reader (recorded_space.cpp) checks it too. KTT is
// the other tuner whose measured spaces the AutoTuningAssociation benchmark
// hub publishes (its KTT data folder).
//
// A KTT output file is {"Metadata": {"Device", "TimeUnit", ...}, "Results":
// [{"KernelName", "Configuration": [{"Name", "Value", "ValueType"}, ...],
// "Status": "Ok" | "CompilationFailed" | "ComputationFailed" |
// "ValidationFailed" | "DeviceLimitsExceeded", "TotalDuration",
// "TotalOverhead", "DataMovementOverhead", "ValidationOverhead",
// "SearcherOverhead", "ComputationResults": [...]}, ...]}. Times are in
// Metadata.TimeUnit. The conversion goes through Kernel Tuner's T4 layout
// (recorded_t4.hpp), which names no parameter lists either: the lists are
// the values the configurations take.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "kiln/core/error.hpp"

namespace kiln::detail {

// Whether `j` has KTT's shape: a "Results" array beside a "Metadata" object.
bool is_ktt_output(const nlohmann::json& j);

// The same file's text in the cache layout, with its device and kernel
// names. A working result's run time is its TotalDuration; its compile cost
// is the overhead KTT does not attribute to data movement, validation or the
// searcher (KTT's "Overhead" of each computation: building and launching
// the kernel); its benchmark cost is the run plus the data movement and
// validation around it. `where` names the file in errors, each of which
// says which result is wrong and how.
Result<nlohmann::json> ktt_as_cache_layout(std::string_view text, const std::string& where);

}  // namespace kiln::detail
