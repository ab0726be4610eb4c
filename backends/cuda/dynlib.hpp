// A shared library opened with dlopen: Kiln never links NVRTC or libcuda, so
// one binary runs where CUDA is absent and reports why instead of failing to
// start.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace kiln::cuda {

class DynamicLibrary {
 public:
  DynamicLibrary() = default;
  ~DynamicLibrary();
  DynamicLibrary(const DynamicLibrary&) = delete;
  DynamicLibrary& operator=(const DynamicLibrary&) = delete;
  DynamicLibrary(DynamicLibrary&& other) noexcept;
  DynamicLibrary& operator=(DynamicLibrary&& other) noexcept;

  // Tries each candidate in order; on failure `attempts` explains each miss.
  static DynamicLibrary open_first(const std::vector<std::string>& candidates,
                                   std::string* attempts);

  bool loaded() const { return handle_ != nullptr; }
  const std::string& path() const { return path_; }
  // nullptr when the symbol is absent (an optional entry point of a newer version).
  void* symbol(const char* name) const;

 private:
  void* handle_ = nullptr;
  std::string path_;
};

// Candidate file names for a CUDA library: <cuda_home>/lib64 (Options::cuda_home:
// $CUDA_HOME, $CUDA_PATH or /usr/local/cuda), then the loader's search path.
std::vector<std::string> cuda_library_candidates(const std::filesystem::path& cuda_home,
                                                 const std::vector<std::string>& sonames);

}  // namespace kiln::cuda
