// What the code snippets in docs/ take as given: the objects a reader has
// set up before the snippet (a device, a kernel, a tuner, the inputs of a
// call). Declared, never defined: the snippets are compiled to check them
// against the API, not linked.
#pragma once

#include <cstdio>
#include <memory>
#include <utility>

#include "kiln/artifact_cache.hpp"
#include "kiln/backend_select.hpp"
#include "kiln/capture.hpp"
#include "kiln/choose_one.hpp"
#include "kiln/compare.hpp"
#include "kiln/device.hpp"
#include "kiln/dynamic_shapes.hpp"
#include "kiln/kernel_runner.hpp"
#include "kiln/runner.hpp"
#include "kiln/shipped_kernels.hpp"
#include "kiln/tuner.hpp"
#include "kiln/tuning_cache.hpp"
#include "kiln/tuning_scope.hpp"

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
extern kiln::Tolerance tolerance;
extern Model model;

}  // namespace kiln_doc_context
