#include "host_jit.hpp"

#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/Support/Error.h>
#include <llvm/Support/MemoryBuffer.h>

#include <atomic>

#include "llvm_info.hpp"

namespace kiln::cpu {

struct HostJit::Impl {
  std::unique_ptr<llvm::orc::LLJIT> jit;
  std::atomic<std::uint64_t> next_id{0};
};

HostJit::HostJit(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
HostJit::~HostJit() = default;

Result<std::shared_ptr<HostJit>> HostJit::create() {
  ensure_native_target();
  auto jit = llvm::orc::LLJITBuilder().create();
  if (!jit) {
    return make_error(ErrorCode::kUnavailable, "LLVM ORC cannot target this host (" +
                                                   host_triple() +
                                                   "): " + llvm::toString(jit.takeError()));
  }
  auto impl = std::make_unique<Impl>();
  impl->jit = std::move(*jit);
  return std::shared_ptr<HostJit>(new HostJit(std::move(impl)));
}

Result<std::shared_ptr<JitModule>> HostJit::load(const std::string& object,
                                                 const std::string& label) {
  llvm::orc::LLJIT& jit = *impl_->jit;
  // createJITDylib links the new dylib against the process's symbols (libc's
  // memcpy, libm), which optimised kernels call.
  auto dylib = jit.createJITDylib("kiln." + std::to_string(impl_->next_id++));
  if (!dylib) {
    return make_error(ErrorCode::kLaunchFailed, "cannot create a JITDylib for " + label + ": " +
                                                    llvm::toString(dylib.takeError()));
  }
  if (auto err = jit.addObjectFile(*dylib, llvm::MemoryBuffer::getMemBufferCopy(object, label))) {
    std::string reason = llvm::toString(std::move(err));
    llvm::consumeError(jit.getExecutionSession().removeJITDylib(*dylib));
    return make_error(ErrorCode::kLaunchFailed,
                      "LLVM ORC rejected the object of " + label + ": " + reason,
                      {{"kernel", label}, {"object_bytes", std::to_string(object.size())}});
  }
  return std::shared_ptr<JitModule>(new JitModule(shared_from_this(), &*dylib, label));
}

JitModule::JitModule(std::shared_ptr<HostJit> jit, void* dylib, std::string label)
    : jit_(std::move(jit)), dylib_(dylib), label_(std::move(label)) {}

JitModule::~JitModule() {
  auto& session = jit_->impl_->jit->getExecutionSession();
  llvm::consumeError(session.removeJITDylib(*static_cast<llvm::orc::JITDylib*>(dylib_)));
}

Result<void*> JitModule::lookup(const std::string& symbol) {
  auto& dylib = *static_cast<llvm::orc::JITDylib*>(dylib_);
  // Linking happens here, on first lookup: relocation errors (an undefined
  // external) surface now, as a value.
  auto address = jit_->impl_->jit->lookup(dylib, symbol);
  if (!address) {
    return make_error(ErrorCode::kNotFound,
                      "cannot link symbol '" + symbol + "' of " + label_ + ": " +
                          llvm::toString(address.takeError()),
                      {{"kernel", label_}, {"symbol", symbol}});
  }
  return address->toPtr<void*>();
}

}  // namespace kiln::cpu
