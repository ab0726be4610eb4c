#include "dynlib.hpp"

#include <dlfcn.h>

#include <filesystem>
#include <utility>

namespace kiln::cuda {

DynamicLibrary::~DynamicLibrary() {
  // Deliberately not dlclose'd: NVRTC and the driver keep thread-local and
  // atexit state that breaks if unmapped before the process ends.
  handle_ = nullptr;
}

DynamicLibrary::DynamicLibrary(DynamicLibrary&& other) noexcept
    : handle_(std::exchange(other.handle_, nullptr)), path_(std::move(other.path_)) {}

DynamicLibrary& DynamicLibrary::operator=(DynamicLibrary&& other) noexcept {
  handle_ = std::exchange(other.handle_, nullptr);
  path_ = std::move(other.path_);
  return *this;
}

DynamicLibrary DynamicLibrary::open_first(const std::vector<std::string>& candidates,
                                          std::string* attempts) {
  DynamicLibrary lib;
  for (const auto& candidate : candidates) {
    void* handle = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle) {
      lib.handle_ = handle;
      lib.path_ = candidate;
      return lib;
    }
    if (attempts) {
      const char* err = dlerror();
      if (!attempts->empty()) *attempts += "; ";
      *attempts += err ? err : candidate + ": not found";
    }
  }
  return lib;
}

void* DynamicLibrary::symbol(const char* name) const {
  return handle_ ? dlsym(handle_, name) : nullptr;
}

std::vector<std::string> cuda_library_candidates(const std::filesystem::path& cuda_home,
                                                 const std::vector<std::string>& sonames) {
  std::vector<std::string> out;
  for (const char* libdir : {"lib64", "lib"}) {
    for (const auto& so : sonames) {
      auto path = cuda_home / libdir / so;
      std::error_code ec;
      if (std::filesystem::exists(path, ec)) out.push_back(path.string());
    }
  }
  // Bare sonames last: the loader's own search (LD_LIBRARY_PATH, ld.so.cache).
  for (const auto& so : sonames) out.push_back(so);
  return out;
}

}  // namespace kiln::cuda
