#include "nvrtc_pch.hpp"

#include <unistd.h>

#include <system_error>

#include "kiln/core/log.hpp"
#include "nvrtc_api.hpp"

namespace kiln::cuda {

namespace {

// A process-unique root: the pid keeps other processes' PCHs out, the
// address keeps two compilers of one process apart.
std::filesystem::path make_root(const void* self) {
  std::error_code ec;
  auto tmp = std::filesystem::temp_directory_path(ec);
  if (ec) tmp = "/tmp";
  return tmp / ("kiln-pch-" + std::to_string(::getpid()) + "-" +
                std::to_string(reinterpret_cast<std::uintptr_t>(self)));
}

}  // namespace

PchDirectories::PchDirectories() : root_(make_root(this)) {}

PchDirectories::~PchDirectories() {
  std::error_code ec;
  std::filesystem::remove_all(root_, ec);
}

std::string PchDirectories::dir_option(const std::vector<std::string>& options) {
  Hasher h;
  h.field("kiln-pch-v1");
  for (const auto& o : options) h.field(o);
  const Hash128 key = h.finish();
  std::lock_guard lock(mutex_);
  auto it = dirs_.find(key);
  if (it != dirs_.end()) return it->second;
  const auto dir = root_ / key.hex().substr(0, 16);
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    KILN_LOG(kWarn) << "cannot create PCH directory " << dir.string() << " (" << ec.message()
                    << "): compiling without precompiled headers";
    return dirs_.emplace(key, std::string()).first->second;
  }
  return dirs_.emplace(key, "-pch-dir=" + dir.string()).first->second;
}

std::size_t PchDirectories::size() const {
  std::lock_guard lock(mutex_);
  return dirs_.size();
}

std::shared_mutex& nvrtc_pch_heap_lock() {
  static std::shared_mutex lock;
  return lock;
}

void nvrtc_grow_pch_heap(std::size_t required) {
  const auto& api = nvrtc();
  if (!api.ok() || !(*api)->SetPCHHeapSize || !(*api)->GetPCHHeapSize) return;
  std::unique_lock lock(nvrtc_pch_heap_lock());
  std::size_t current = 0;
  (*api)->GetPCHHeapSize(&current);
  if (current >= required) return;  // another thread grew it already
  const std::size_t want = required + required / 4;
  if ((*api)->SetPCHHeapSize(want) == NVRTC_SUCCESS) {
    KILN_LOG(kInfo) << "NVRTC PCH heap grown from " << current << " to " << want << " bytes";
  }
}

}  // namespace kiln::cuda
