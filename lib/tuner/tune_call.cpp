#include "tune_call.hpp"

#include "kiln/core/keys.hpp"

namespace kiln::internal {

TuneCall make_call(const TunableKernel& kernel, const ArgList& args, Device& device,
                   const TuneOptions& options, const ToolchainFingerprint& toolchain) {
  const DeviceProperties& p = device.properties();
  TuneCall call{kernel,
                args,
                device,
                options,
                problem_key(kernel.tmpl.name, args, kernel.buckets),
                CompileContext{toolchain, CacheEnvRegistry::global().snapshot()},
                DeviceIdentity{p.arch, p.name, p.cc_major, p.cc_minor},
                definition_hash(kernel),
                Hash128{}};
  call.key =
      tuning_key(call.problem, call.identity.arch, toolchain, call.context.env, call.definition);
  return call;
}

Result<TuneResult> served(const Status& st, TuneResult& result) {
  if (!st.ok()) return st.error();
  return std::move(result);
}

}  // namespace kiln::internal
