// NVRTC precompiled headers, keyed by option set.
//
// Measured with CUDA 13.0: automatic PCH (-pch) keeps its PCHs in a heap in
// this process (nvrtcSetPCHHeapSize); a program whose options differ from a
// PCH's first triggers warning 629 on it and then falls back or makes
// another. Giving every option set its own -pch-dir inside a per-process
// directory means a compile only ever sees PCHs made with its own options:
// no 629 probing, and no other process's PCH (warning 20282, slower than
// none). The directory has to exist, though NVRTC writes nothing into it.
#pragma once

#include <cstddef>
#include <filesystem>
#include <map>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <vector>

#include "kiln/core/hash.hpp"

namespace kiln::cuda {

class PchDirectories {
 public:
  PchDirectories();
  ~PchDirectories();  // removes this process's directories
  PchDirectories(const PchDirectories&) = delete;
  PchDirectories& operator=(const PchDirectories&) = delete;

  // "-pch-dir=..." for this option set, creating the directory on first use.
  // Empty when the directory cannot be made (PCH is then skipped).
  std::string dir_option(const std::vector<std::string>& options);

  std::size_t size() const;

 private:
  std::filesystem::path root_;
  mutable std::mutex mutex_;
  std::map<Hash128, std::string> dirs_;
};

// The PCH heap is one per process. Every compile holds this lock shared;
// resizing the heap (which frees every PCH in it) holds it exclusively, so no
// compile sees the heap move under it.
std::shared_mutex& nvrtc_pch_heap_lock();

// After a compile that asked for a PCH and got NVRTC_ERROR_PCH_CREATE_HEAP_EXHAUSTED:
// grows the heap to `required` (with headroom) so the next compile makes it.
// Takes nvrtc_pch_heap_lock() exclusively: call it without holding it.
void nvrtc_grow_pch_heap(std::size_t required);

}  // namespace kiln::cuda
