// Kiln's umbrella header: every public header, by area. Include the area
// headers directly to compile less; this one is for applications and the
// examples that want all of Kiln in one line.
//
//   core/      configs, spaces, errors, hashing, keys, options, tensors
//   compile/   kernel templates, the compile stage, the compile pool
//   device/    the device and backend interfaces
//   cache/     the artifact and tuning caches
//   backends/  the registered backends, opening devices, the toolchain report
//   kernels/   the shipped kernels, user kernels, calls described as data
//   tuner/     the autotuner, search strategies, measurements, selection
//   framework/ runners, choose_one, scopes, capture, dynamic shapes
//
// Backend-specific headers (kiln/backends/cpu.hpp, kiln/backends/cuda.hpp,
// kiln/backends/nvrtc.hpp) stay out: they exist only where that backend is built.
#pragma once

#include "kiln/core/checked_math.hpp"
#include "kiln/core/config.hpp"
#include "kiln/core/config_space.hpp"
#include "kiln/core/error.hpp"
#include "kiln/core/fingerprint.hpp"
#include "kiln/core/hash.hpp"
#include "kiln/core/keys.hpp"
#include "kiln/core/log.hpp"
#include "kiln/core/options.hpp"
#include "kiln/core/problem.hpp"
#include "kiln/core/tensor.hpp"

#include "kiln/compile/compile.hpp"
#include "kiln/compile/compile_engine.hpp"
#include "kiln/compile/compile_pool.hpp"
#include "kiln/compile/compile_run.hpp"
#include "kiln/compile/kernel.hpp"
#include "kiln/compile/templates.hpp"

#include "kiln/cache/artifact_cache.hpp"
#include "kiln/cache/artifact_store.hpp"
#include "kiln/cache/tuning_cache.hpp"
#include "kiln/cache/tuning_record.hpp"

#include "kiln/backends/devices.hpp"
#include "kiln/backends/toolchain.hpp"
#include "kiln/device/backend.hpp"
#include "kiln/device/device.hpp"

#include "kiln/kernels/int_expr.hpp"
#include "kiln/kernels/kernel_call.hpp"
#include "kiln/kernels/kernel_description.hpp"
#include "kiln/kernels/shipped_kernels.hpp"
#include "kiln/kernels/tune_request.hpp"
#include "kiln/kernels/tuning_target.hpp"

#include "kiln/search/search.hpp"
#include "kiln/tuner/args.hpp"
#include "kiln/tuner/compare.hpp"
#include "kiln/tuner/device_identity.hpp"
#include "kiln/tuner/measurement.hpp"
#include "kiln/tuner/selection.hpp"
#include "kiln/tuner/tune_options.hpp"
#include "kiln/tuner/tuner.hpp"
#include "kiln/tuner/tuning_stats.hpp"

#include "kiln/framework/backend_select.hpp"
#include "kiln/framework/capture.hpp"
#include "kiln/framework/choose_one.hpp"
#include "kiln/framework/dynamic_shapes.hpp"
#include "kiln/framework/kernel_runner.hpp"
#include "kiln/framework/runner.hpp"
#include "kiln/framework/tuning_scope.hpp"
