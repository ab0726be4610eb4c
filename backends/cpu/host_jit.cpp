#include "host_jit.hpp"

#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/Support/Error.h>
#include <llvm/Support/MemoryBuffer.h>

#include <atomic>
#include <mutex>
#include <unordered_map>

#include "kiln/core/log.hpp"
#include "llvm_info.hpp"
#include "llvm_lock.hpp"

namespace kiln::cpu {

namespace {

// The JITDylib this thread is looking a symbol up in. LLJIT materialises
// (links) in the thread that asks (no compile threads: an in-place task
// dispatcher), so the session's error reporter, called during that link,
// knows which module the error belongs to.
thread_local const void* t_linking_dylib = nullptr;

struct LinkingScope {
  explicit LinkingScope(const void* dylib) { t_linking_dylib = dylib; }
  ~LinkingScope() { t_linking_dylib = nullptr; }
  LinkingScope(const LinkingScope&) = delete;
  LinkingScope& operator=(const LinkingScope&) = delete;
};

}  // namespace

struct HostJit::Impl {
  // Declared before `jit`, so they outlive it: the session may report an
  // error while it shuts down.
  std::mutex errors_mutex;
  // What ORC reported while linking each JITDylib (missing symbols): the
  // failed lookup itself says only "Failed to materialize symbols".
  std::unordered_map<const void*, std::string> link_errors;
  std::unique_ptr<llvm::orc::LLJIT> jit;
  std::atomic<std::uint64_t> next_id{0};

  void report(llvm::Error err) {
    std::string text = llvm::toString(std::move(err));
    if (const void* dylib = t_linking_dylib) {
      std::lock_guard lock(errors_mutex);
      std::string& kept = link_errors[dylib];
      kept += kept.empty() ? text : "; " + text;
      return;
    }
    KILN_LOG(kWarn) << "LLVM ORC: " << text;  // not from a lookup: nobody to hand it to
  }
  std::string link_error_of(const void* dylib) {
    std::lock_guard lock(errors_mutex);
    auto it = link_errors.find(dylib);
    return it == link_errors.end() ? std::string() : it->second;
  }
};

HostJit::HostJit(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
HostJit::~HostJit() = default;

Result<std::shared_ptr<HostJit>> HostJit::create() {
  auto in_use = llvm_in_use();
  ensure_native_target();
  auto jit = llvm::orc::LLJITBuilder().create();
  if (!jit) {
    return make_error(ErrorCode::kUnavailable, "LLVM ORC cannot target this host (" +
                                                   host_triple() +
                                                   "): " + llvm::toString(jit.takeError()));
  }
  auto impl = std::make_unique<Impl>();
  impl->jit = std::move(*jit);
  // Replaces ORC's default, which prints link errors (the missing symbols)
  // to stderr where no caller sees them.
  impl->jit->getExecutionSession().setErrorReporter(
      [raw = impl.get()](llvm::Error err) { raw->report(std::move(err)); });
  return std::shared_ptr<HostJit>(new HostJit(std::move(impl)));
}

Result<std::shared_ptr<HostJit>> HostJit::shared() {
  static std::mutex mutex;
  static std::shared_ptr<HostJit> jit;
  std::lock_guard lock(mutex);
  if (jit) return jit;
  auto made = create();
  if (!made) return made.error();
  jit = std::move(*made);
  return jit;
}

Result<std::shared_ptr<JitModule>> HostJit::load(const std::string& object,
                                                 const std::string& label) {
  auto in_use = llvm_in_use();
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
  auto in_use = llvm_in_use();
  auto& session = jit_->impl_->jit->getExecutionSession();
  llvm::consumeError(session.removeJITDylib(*static_cast<llvm::orc::JITDylib*>(dylib_)));
  std::lock_guard lock(jit_->impl_->errors_mutex);
  jit_->impl_->link_errors.erase(dylib_);
}

Result<void*> JitModule::lookup(const std::string& symbol) {
  auto& dylib = *static_cast<llvm::orc::JITDylib*>(dylib_);
  // Linking happens here, on first lookup: relocation errors (an undefined
  // external) surface now, as a value.
  auto address = [&] {
    auto in_use = llvm_in_use();
    LinkingScope scope(dylib_);
    return jit_->impl_->jit->lookup(dylib, symbol);
  }();
  if (!address) {
    std::string reason = llvm::toString(address.takeError());
    // Another thread may have linked this module and met the error; the
    // reporter ran before either lookup returned, so it is kept here.
    const std::string linking = jit_->impl_->link_error_of(dylib_);
    if (linking.empty()) {
      return make_error(ErrorCode::kNotFound,
                        "cannot link symbol '" + symbol + "' of " + label_ + ": " + reason,
                        {{"kernel", label_}, {"symbol", symbol}});
    }
    return make_error(ErrorCode::kNotFound,
                      "cannot link symbol '" + symbol + "' of " + label_ +
                          ": the kernel needs what the JIT cannot resolve (" + linking + "); " +
                          kKernelLinkFix,
                      {{"kernel", label_}, {"symbol", symbol}, {"link_error", linking}});
  }
  return address->toPtr<void*>();
}

}  // namespace kiln::cpu
