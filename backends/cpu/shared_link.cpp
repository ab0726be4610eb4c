#include "shared_link.hpp"

#include "llvm_lock.hpp"

#include <lld/Common/Driver.h>
#include <llvm/Support/raw_ostream.h>
#include <signal.h>
#include <unistd.h>

#include <array>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <vector>

LLD_HAS_DRIVER(elf)

namespace kiln::cpu {

namespace {

// A private scratch directory, removed with what is in it: LLD reads and
// writes files (it has no in-memory interface).
struct Scratch {
  std::filesystem::path dir;
  Scratch() {
    std::string pattern = (std::filesystem::temp_directory_path() / "kiln-link-XXXXXX").string();
    if (::mkdtemp(pattern.data())) dir = pattern;
  }
  ~Scratch() {
    std::error_code ec;
    if (!dir.empty()) std::filesystem::remove_all(dir, ec);
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
};

// What LLD changes in the process without asking, put back when it is done.
// Its first output file registers LLVM's signal handlers (SIGINT, SIGTERM,
// SIGSEGV, ...: they remove LLD's temporary files, then kill the process,
// so Python's Ctrl-C and Kiln's own SIGTERM handling would never run) and
// gives the calling thread an alternate signal stack from malloc, which a
// sanitizer's thread exit then fails to unmap (ASan: "failed to deallocate",
// and the process dies). LLVM registers them once per process, so putting
// them back after each link keeps them out for good.
class SignalStateGuard {
 public:
  SignalStateGuard() {
    for (int sig = 1; sig < NSIG; ++sig)
      saved_[sig].ok = ::sigaction(sig, nullptr, &saved_[sig].action) == 0;
    stack_ok_ = ::sigaltstack(nullptr, &stack_) == 0;
  }
  ~SignalStateGuard() {
    for (int sig = 1; sig < NSIG; ++sig) {
      if (saved_[sig].ok) ::sigaction(sig, &saved_[sig].action, nullptr);
    }
    if (stack_ok_) {
      // A disabled stack is put back as disabled, whatever size it had.
      stack_t back = stack_;
      if (back.ss_flags & SS_DISABLE) back = stack_t{nullptr, SS_DISABLE, 0};
      ::sigaltstack(&back, nullptr);
    }
  }
  SignalStateGuard(const SignalStateGuard&) = delete;
  SignalStateGuard& operator=(const SignalStateGuard&) = delete;

 private:
  struct Saved {
    bool ok = false;
    struct sigaction action {};
  };
  std::array<Saved, NSIG> saved_{};
  stack_t stack_{};
  bool stack_ok_ = false;
};

}  // namespace

Result<std::string> link_shared_object(const std::string& object, const std::string& label) {
  Scratch scratch;
  if (scratch.dir.empty()) {
    return make_error(ErrorCode::kUnavailable, "cannot make a scratch directory to link " + label +
                                                   " in " +
                                                   std::filesystem::temp_directory_path().string() +
                                                   ": set TMPDIR to a writable directory");
  }
  const std::string in = (scratch.dir / "kernel.o").string();
  const std::string out = (scratch.dir / "kernel.so").string();
  {
    std::ofstream file(in, std::ios::binary);
    file.write(object.data(), static_cast<std::streamsize>(object.size()));
    if (!file.flush()) {
      return make_error(ErrorCode::kUnavailable, "cannot write " + in + " to link " + label);
    }
  }
  // -Bsymbolic: the kernel's own functions bind to themselves, never to a
  // same-named one the process exports. -z now: every symbol bound at
  // dlopen (an unresolved one fails there, not at a launch). No build id:
  // the same object links to the same bytes.
  const std::vector<const char*> args = {
      "ld.lld",      "-shared",          "-Bsymbolic",      "-z", "now",       "-z",
      "noexecstack", "--hash-style=gnu", "--build-id=none", "-o", out.c_str(), in.c_str()};
  std::string out_text, err_text;
  llvm::raw_string_ostream out_stream(out_text), err_stream(err_text);
  static std::mutex mutex;
  static bool broken = false;  // LLD said it cannot run again (it crashed)
  lld::Result result{1, true};
  {
    std::lock_guard lock(mutex);
    if (broken) {
      return make_error(ErrorCode::kUnavailable,
                        "LLD crashed in an earlier link of this process and cannot run again: "
                        "restart the process");
    }
    // LLD resets LLVM's options and registers its targets again: no
    // compile may run meanwhile (llvm_lock.hpp).
    auto alone = llvm_rewritten();
    SignalStateGuard signals;
    result = lld::lldMain(args, out_stream, err_stream, {{lld::Gnu, &lld::elf::link}});
    broken = !result.canRunAgain;
  }
  err_stream.flush();
  if (result.retCode != 0) {
    return make_error(ErrorCode::kCompileFailed,
                      "LLD could not link " + label + " into a shared object: " + err_text,
                      {{"log", err_text}, {"kernel", label}});
  }
  std::ifstream file(out, std::ios::binary);
  std::stringstream bytes;
  bytes << file.rdbuf();
  if (!file || bytes.str().empty()) {
    return make_error(ErrorCode::kCompileFailed, "LLD wrote no shared object for " + label);
  }
  return bytes.str();
}

}  // namespace kiln::cpu
