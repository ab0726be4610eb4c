// The flags of `kiln tune`, each bound once: to the field of the tuning
// request or of the tuner's options it sets. One table (tune_flags.cpp)
// registers every option with its help and checks, and echoes the values
// in the JSON report's "settings"; nothing copies a flag between structs.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kiln/kernels/tune_request.hpp"

namespace kiln::tool {

// What `kiln tune` is asked: the flags land in these fields.
struct TuneCall {
  TuneRequest request;      // what to tune: kernel, shape, backend, devices, reference
  TuneOptions options;      // how: search, pipeline, measurement, checks, cache
  std::string distributed;  // a strategy: every rank of an MPI job tunes together
  bool json = false;
  // Each --search given, to refuse a second one (see add_tune_flags).
  std::vector<std::string> searches_given;

  // The CLI's defaults where they are not the library's own.
  TuneCall();
};

// Adds every flag of `kiln tune` to `cmd`, bound to `call`'s fields
// (`call` must outlive `cmd`'s parse).
void add_tune_flags(CLI::App& cmd, TuneCall& call);

// The flags' values for the JSON report's "settings", by their JSON names.
nlohmann::json tune_settings_json(const TuneCall& call);

}  // namespace kiln::tool
