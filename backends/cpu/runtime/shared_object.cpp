// CPU kernels stored as shared objects, loaded with the system's dynamic
// loader: no LLVM in the process.
#include <dlfcn.h>
#include <elf.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "cpu_runtime.hpp"

namespace kiln::cpu {

namespace {

#if defined(__x86_64__)
constexpr unsigned kMachine = EM_X86_64;
#elif defined(__aarch64__)
constexpr unsigned kMachine = EM_AARCH64;
#else
constexpr unsigned kMachine = EM_NONE;
#endif

// Why `bytes` is not a shared object this process can load; empty when it
// is. The loader trusts what it maps: bytes of another kind (a truncated
// file, another machine's code) must be refused before it sees them.
std::string not_loadable(const std::string& bytes) {
  if (bytes.size() < sizeof(Elf64_Ehdr)) {
    return std::to_string(bytes.size()) + " bytes, too short for an ELF header";
  }
  Elf64_Ehdr h;
  std::memcpy(&h, bytes.data(), sizeof h);
  if (std::memcmp(h.e_ident, ELFMAG, SELFMAG) != 0) return "not an ELF file";
  if (h.e_ident[EI_CLASS] != ELFCLASS64) return "not a 64-bit ELF file";
  if (h.e_type != ET_DYN) return "an ELF file of type " + std::to_string(h.e_type) + ", not ET_DYN";
  if (h.e_machine != kMachine) {
    return "ELF code for machine " + std::to_string(h.e_machine) + ", this host is " +
           std::to_string(kMachine);
  }
  // Every header the loader reads must lie inside the bytes.
  const std::uint64_t ph_end = h.e_phoff + std::uint64_t{h.e_phnum} * h.e_phentsize;
  const std::uint64_t sh_end = h.e_shoff + std::uint64_t{h.e_shnum} * h.e_shentsize;
  if (h.e_phnum == 0 || ph_end > bytes.size() || sh_end > bytes.size()) {
    return "its program or section headers lie past its " + std::to_string(bytes.size()) +
           " bytes (truncated)";
  }
  for (unsigned i = 0; i < h.e_phnum; ++i) {
    Elf64_Phdr p;
    std::memcpy(&p, bytes.data() + h.e_phoff + std::uint64_t{i} * h.e_phentsize, sizeof p);
    if (p.p_type == PT_LOAD && p.p_offset + p.p_filesz > bytes.size()) {
      return "a segment lies past its " + std::to_string(bytes.size()) + " bytes (truncated)";
    }
  }
  return {};
}

class SharedObjectModule final : public CodeModule {
 public:
  SharedObjectModule(void* handle, int fd, std::string path, std::string label)
      : handle_(handle), fd_(fd), path_(std::move(path)), label_(std::move(label)) {}
  // NOTES: the loader knows an object by the name it was opened as
  // ("/proc/self/fd/7") before it compares inodes, so a second memfd given
  // the same number would be served the first one's code. The fd stays
  // open while the object is mapped, and for good when dlclose leaves it
  // mapped (an object with STB_GNU_UNIQUE symbols is never unloaded).
  ~SharedObjectModule() override {
    ::dlclose(handle_);
    if (void* still = ::dlopen(path_.c_str(), RTLD_LAZY | RTLD_NOLOAD)) {
      ::dlclose(still);
      return;
    }
    ::close(fd_);
  }
  SharedObjectModule(const SharedObjectModule&) = delete;
  SharedObjectModule& operator=(const SharedObjectModule&) = delete;

  Result<void*> lookup(const std::string& symbol) override {
    ::dlerror();
    void* address = ::dlsym(handle_, symbol.c_str());
    if (!address) {
      const char* why = ::dlerror();
      return make_error(ErrorCode::kNotFound,
                        "the shared object of " + label_ + " has no symbol '" + symbol + "' (" +
                            (why ? why : "null address") + ")",
                        {{"kernel", label_}, {"symbol", symbol}});
    }
    return address;
  }

 private:
  void* handle_;
  int fd_;
  std::string path_;
  std::string label_;
};

}  // namespace

Result<std::shared_ptr<CodeModule>> load_shared_object(const std::string& bytes,
                                                       const std::string& label) {
  if (std::string why = not_loadable(bytes); !why.empty()) {
    return make_error(ErrorCode::kCorrupt,
                      "the stored shared object of " + label + " cannot be loaded: " + why +
                          " (drop the cache entry: it is compiled again)",
                      {{"kernel", label}, {"bytes", std::to_string(bytes.size())}});
  }
  // NOTES: from memory, not from the cache's file: the bytes were checked
  // against the entry's digest when the cache read them (entry_check.cpp),
  // and a file could change between that check and dlopen; and a memfd
  // maps where /tmp is mounted noexec.
  const int fd = ::memfd_create("kiln-cpu-kernel", MFD_CLOEXEC);
  if (fd < 0) {
    return make_error(ErrorCode::kUnavailable,
                      std::string("memfd_create for a CPU kernel failed: ") + std::strerror(errno));
  }
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string why = std::strerror(errno);
      ::close(fd);
      return make_error(ErrorCode::kUnavailable, "cannot write " + label + " to a memfd: " + why);
    }
    done += static_cast<std::size_t>(n);
  }
  const std::string path = "/proc/self/fd/" + std::to_string(fd);
  // RTLD_NOW: a symbol the process lacks is an error here, not a crash at
  // the first launch. RTLD_LOCAL: two kernels' identical entry names never
  // meet.
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    ::close(fd);
    const char* why = ::dlerror();
    return make_error(ErrorCode::kLaunchFailed,
                      "cannot load the shared object of " + label + ": " +
                          (why ? why : "dlopen failed") + "; " + kKernelLinkFix,
                      {{"kernel", label}});
  }
  return std::shared_ptr<CodeModule>(std::make_shared<SharedObjectModule>(handle, fd, path, label));
}

}  // namespace kiln::cpu
