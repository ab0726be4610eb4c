// A kiln.Kernel called with one config's parameters (kernel(*args,
// BLOCK=128)): that config's artifact compiled, or loaded from the artifact
// cache, and launched with the kernel's launch rule. No tuning: nothing is
// benchmarked, checked or written to the tuning cache, and no tuning lock
// is taken (a hook of another kernel's tuning may run a fixed config).
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include <memory>
#include <mutex>
#include <optional>

#include "kiln/core/options.hpp"
#include "kiln/tuner/artifact_source.hpp"
#include "py_args.hpp"
#include "py_gil.hpp"
#include "py_kernel_spec.hpp"
#include "py_launch.hpp"
#include "py_runtime.hpp"

namespace nb = nanobind;

namespace kiln::py {

namespace {

class FixedConfig {
 public:
  // `spec` as kiln.autotune's (python/kiln/_spec.py), its space the one
  // config: checked the same way, with the same errors.
  explicit FixedConfig(nb::dict spec) {
    read_kernel_spec(spec, core_);
    core_.kernel.tmpl.check();
    config_ = core_.kernel.tmpl.space.default_config();
  }

  // Hooks run on this thread (grid(meta)): see calling_python.
  nb::object call(nb::args args, nb::kwargs kwargs) {
    return calling_python([&] { return call_here(args, kwargs); });
  }

  const std::string& name() const { return core_.name(); }

 private:
  nb::object call_here(nb::args args, nb::kwargs kwargs) {
    nb::handle stream = core_.stream_keyword(kwargs);
    CallArgs ca = convert_args(core_.params(), core_.key_mask, args, core_.name().c_str(), {},
                               core_.named_outputs);
    std::shared_ptr<Loaded> loaded = current();
    if (!loaded) {
      const std::string kind = core_.kind_from(ca);
      GilRelease release;
      loaded = load(kind);
    }
    // A call over no blocks (grid cdiv(n, BLOCK) with n = 0) runs nothing,
    // as in Triton.
    const LaunchGeometry g = core_.hooks.geometry(config_, core_.named_args(args));
    if (empty_grid(g.grid)) return nb::none();
    const LoadedKernel* kernel = nullptr;
    {
      GilRelease release;
      kernel = &built(*loaded);
    }
    std::optional<Stream> s = to_stream(loaded->rt->device(), stream, args);
    Status st = ok_status();
    {
      GilRelease release;
      st = launch_with_resets(loaded->rt->device(), *kernel, core_.kernel, g, ca.args,
                              s ? &*s : nullptr);
    }
    check(st);
    return nb::none();
  }

  // This process's runtime and, once built, the config's kernel loaded on
  // its device.
  struct Loaded {
    std::shared_ptr<Runtime> rt;
    LoadedKernel kernel;
    std::uint64_t generation = fork_generation();
  };

  // What this process loaded (null before the first call, and in a forked
  // child: it starts from its own runtime).
  std::shared_ptr<Loaded> current() {
    std::lock_guard lock(mutex_);
    if (loaded_ && loaded_->generation != fork_generation()) loaded_.reset();
    return loaded_;
  }

  // Opens the runtime of `kind`; without the GIL.
  std::shared_ptr<Loaded> load(std::string kind) {
    auto made = std::make_shared<Loaded>();
    made->rt = runtime(kind);
    std::lock_guard lock(mutex_);
    if (!loaded_ || loaded_->generation != fork_generation()) loaded_ = made;
    return loaded_;
  }

  // The config's kernel, built on first use: its artifact from the
  // artifact cache, else compiled now and stored, then loaded; without the
  // GIL. Errors keep their evidence (a compile error its log:
  // kiln.CompileError). Once built it does not change.
  const LoadedKernel& built(Loaded& into) {
    std::lock_guard lock(mutex_);
    if (into.kernel.valid()) return into.kernel;
    const CompileContext context{into.rt->target.backend.toolchain,
                                 CacheEnvRegistry::global().snapshot()};
    Result<Artifact> artifact = internal::compile_config(
        core_.kernel, config_, into.rt->target.backend, context, into.rt->artifacts.get());
    if (!artifact.ok()) throw Error(artifact.error());
    Result<LoadedKernel> kernel = into.rt->device().load(*artifact);
    if (!kernel.ok()) throw Error(kernel.error());
    into.kernel = std::move(*kernel);
    return into.kernel;
  }

  KernelSpec core_;
  Config config_;
  std::mutex mutex_;
  std::shared_ptr<Loaded> loaded_;
};

}  // namespace

void register_fixed_config(nb::module_& m) {
  nb::class_<FixedConfig>(m, "_FixedConfig", nb::dynamic_attr())
      .def(nb::init<nb::dict>(), nb::arg("spec"))
      .def("__call__", &FixedConfig::call)
      .def_prop_ro("_name", &FixedConfig::name);
}

}  // namespace kiln::py
