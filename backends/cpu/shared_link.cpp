#include "shared_link.hpp"

#include <lld/Common/Driver.h>
#include <llvm/Support/raw_ostream.h>
#include <unistd.h>

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
