// What `kiln tune` was asked to tune, checked and resolved: the kernel
// (shipped or the user's), the shape, the backend and devices, and what the
// outputs are checked against. Bad input comes back as an error naming the
// problem and the fix (the command exits 2).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kiln/kernels/kernel_call.hpp"
#include "kiln/kernels/tuning_target.hpp"
#include "kiln/tuner/tuner.hpp"

namespace kiln::tool {

struct TuneArgs {
  std::string kernel, template_file, space_file, entry;
  std::string shape, dtype, backend = "auto", devices;
  bool no_pipeline = false;
  std::size_t group_size = 0;
  int threads = 0;
  double budget_s = 0;
  std::size_t max_configs = 0;
  std::string search = "exhaustive";
  std::uint64_t seed = 0;
  std::string reference = "auto";
  bool no_check = false;
  bool retune = false;
  bool cold_l2 = false, graphs = false;  // timing: TuneOptions::cold_l2, graphs, delay_us
  double delay_us = 0;
  std::string trace;
  bool json = false;
  std::string isolation = "process";  // benchmark workers: process, thread or auto
};

struct TuneJob {
  std::string name;   // as reported: the shipped name, or the user kernel's
  bool user = false;  // --template: the user's own kernel
  BackendKind backend = BackendKind::kCpu;
  TunableKernel kernel;
  std::vector<ArgSpec> args;
  ShapeDims shape;
  std::vector<std::string> dims;  // the shape's names in the kernel's order
  std::string dtype;              // shipped kernels only
  std::vector<int> devices;
  ReferenceKind reference = ReferenceKind::kDefaultConfig;
  ReferenceFn reference_fn;
  std::optional<Tolerance> tolerance;
  std::string reference_text;  // for the report
  double flops = 0, bytes = 0;
  std::string cpu_alternative;  // a shipped CPU kernel of the same family
};

// "M=512,N=512,K=64" -> dims. Throws kiln::Error naming the bad item.
ShapeDims parse_shape(const std::string& text);

// Errors: kInvalidArgument / kNotFound for bad input, kUnavailable when the
// backend is not built here.
Result<TuneJob> make_tune_job(const TuneArgs& args);

}  // namespace kiln::tool
