// What the code snippets in docs/ take as given: the objects a reader has
// set up before the snippet (a device, a kernel, a tuner, the inputs of a
// call). Declared, never defined: the snippets are compiled to check them
// against the API, not linked.
#pragma once

#include <cstdio>
#include <memory>
#include <utility>

#include "kiln/cache/artifact_cache.hpp"
#include "kiln/cache/tuning_cache.hpp"
#include "kiln/device/device.hpp"
#include "kiln/distributed/distributed_tune.hpp"
#include "kiln/framework/backend_select.hpp"
#include "kiln/framework/capture.hpp"
#include "kiln/framework/choose_one.hpp"
#include "kiln/framework/dynamic_shapes.hpp"
#include "kiln/framework/kernel_runner.hpp"
#include "kiln/framework/runner.hpp"
#include "kiln/framework/tuning_scope.hpp"
#include "kiln/kernels/shipped_kernels.hpp"
#include "kiln/tuner/compare.hpp"
#include "kiln/tuner/tuner.hpp"

namespace kiln_doc_context {

// A model whose forward pass calls choose_one for each of its ops.
struct Model {
  kiln::Status forward(const kiln::ArgList& batch);
};

extern kiln::TunableKernel kernel;
extern kiln::Backend backend;
extern std::unique_ptr<kiln::Device> device;
extern kiln::ArtifactCache artifacts;
extern kiln::TuningCache tunings;
extern kiln::KernelRunner rms;
extern kiln::TunableRunner& reference;
extern kiln::BackendSpec reference_spec;
extern kiln::ArgList inputs;
extern kiln::ArgList batch;
extern kiln::ArgList x;
extern kiln::TuningSpec spec;
extern kiln::TacticTuner tuner;
extern kiln::Autotuner autotuner;
extern kiln::Tolerance tolerance;
extern Model model;

}  // namespace kiln_doc_context
