// A tuning request as text (what `kiln tune` is asked, or a Python call):
// which kernel, shipped or the user's own, for which shape, on which backend
// and devices, checked against what. tune_request() resolves it, opens the
// target, builds a realistic call and tunes it: one call from flags to a
// TuneResult.
//
//   TuneRequest request;
//   request.kernel = "gemm_f32";
//   request.shape = "M=512,N=512,K=512";
//   auto run = tune_request(request, TuneOptions{}, kiln::Options::global());
//   // run->result.config, run->result.record, run->job.flops ...
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kiln/core/options.hpp"
#include "kiln/kernels/kernel_call.hpp"
#include "kiln/kernels/tuning_target.hpp"
#include "kiln/tuner/tuner.hpp"

namespace kiln {

struct TuneRequest {
  // Either `kernel` (a shipped kernel or family: `kiln kernels` lists them)
  // or `template_file` + `space_file` (+ `entry`): the user's own kernel.
  std::string kernel, template_file, space_file, entry;
  std::string shape;             // "M=512,N=512,K=512"
  std::string dtype;             // shipped kernels: f32, f16, bf16 (empty: the kernel's first)
  std::string backend = "auto";  // auto, cpu or cuda
  std::string devices;           // "0,1" or "cuda:0,cuda:1" (empty: the first)
  // Shipped kernels: "auto" (host code when cheap, else the default config),
  // "host" or "default". A user kernel's reference is in its spec.
  std::string reference = "auto";
  std::uint64_t seed = 0;                  // the input data's seed
  Isolation isolation = Isolation::kAuto;  // as BenchPlacement's
  int cpu_threads = 0;                     // CPU block runners (0: one per hardware thread)
};

// A request resolved: the kernel, its call's arguments and what the outputs
// are checked against.
struct TuneJob {
  std::string name;   // as reported: the shipped name, or the user kernel's
  bool user = false;  // the user's own kernel
  std::string backend = "cpu";
  TunableKernel kernel;
  std::vector<ArgSpec> args;
  ShapeDims shape;
  std::vector<std::string> dims;  // the shape's names in the kernel's order
  std::string dtype;              // shipped kernels only
  std::vector<int> devices;
  ReferenceKind reference = ReferenceKind::kDefaultConfig;
  ReferenceFn reference_fn;
  std::optional<Tolerance> tolerance;
  std::string reference_text;  // for reports
  double flops = 0, bytes = 0;
  std::string cpu_alternative;  // a shipped CPU kernel of the same family
};

// "M=512,N=512,K=64" -> dims. Throws kiln::Error naming the bad item.
ShapeDims parse_shape(const std::string& text);

// Errors: kInvalidArgument / kNotFound for bad input, kUnavailable when the
// backend is not built here.
Result<TuneJob> resolve_tune_request(const TuneRequest& request);

// What tune_request() made: the job, the target it ran on, the call's
// tensors (alive as long as this is) and the result.
struct TuneRun {
  TuneJob job;
  TuningTarget target;
  KernelCall call;
  TuneResult result;
};

// The step of tune_request() that failed, in its error's details["step"]:
// "request" (bad input, or a backend not built), "target" (no device),
// "call" (the tensors cannot be made) or "tune".
// Resolves `request`, opens its target, builds the call (seeded) and tunes
// it with `options`, whose checking fields (reference, reference function,
// tolerance) are the job's. The artifact and tuning caches are opened from
// `caches` once the call is built (bad input never touches them).
Result<TuneRun> tune_request(const TuneRequest& request, TuneOptions options,
                             const Options& caches);

}  // namespace kiln
