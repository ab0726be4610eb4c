// Sealed anonymous memory shared with worker processes (shared_memory.hpp).
#include "kiln/process/shared_memory.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

namespace kiln {

namespace {

// The seals a reader relies on: the bytes cannot change under it and the
// file cannot shrink (a shrunk mapping faults with SIGBUS on access).
constexpr int kNeededSeals = F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL;

ErrorInfo os_error(const std::string& call) {
  return make_error(
      ErrorCode::kUnavailable,
      "shared memory for the benchmark workers: " + call + " failed: " + std::strerror(errno),
      {{"errno", std::to_string(errno)}});
}

ErrorInfo not_ours(const std::string& what) {
  return make_error(ErrorCode::kCorrupt, "the call's shared memory " + what +
                                             ": the parent is not a Kiln of this build, or the "
                                             "descriptor is not what it sent");
}

}  // namespace

Result<SharedMemory> SharedMemory::create(std::size_t bytes, const std::string& name) {
  if (bytes == 0) {
    return make_error(ErrorCode::kInvalidArgument, "shared memory of 0 bytes cannot be mapped");
  }
  const int fd = ::memfd_create(name.c_str(), MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) return os_error("memfd_create");
  SharedMemory m;
  m.fd_ = std::make_shared<const worker::OwnedFd>(fd);
  if (::ftruncate(fd, static_cast<off_t>(bytes)) != 0) return os_error("ftruncate");
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) return os_error("mmap");
  m.data_ = static_cast<char*>(p);
  m.size_ = bytes;
  return m;
}

Status SharedMemory::seal() {
  // A write seal is refused while a writable shared mapping exists: the
  // view is dropped first and mapped again read-only.
  unmap();
  const int fd = fd_->get();
  if (::fcntl(fd, F_ADD_SEALS, kNeededSeals) != 0) return os_error("sealing (F_ADD_SEALS)");
  void* p = ::mmap(nullptr, size_, PROT_READ, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) return os_error("mmap");
  data_ = static_cast<char*>(p);
  return ok_status();
}

Result<SharedMemory> SharedMemory::map(worker::SharedFd fd, std::size_t bytes) {
  if (!fd || fd->get() < 0) return not_ours("is missing");
  const int seals = ::fcntl(fd->get(), F_GET_SEALS);
  if (seals < 0 || (seals & kNeededSeals) != kNeededSeals) return not_ours("is not sealed");
  struct stat st {};
  if (::fstat(fd->get(), &st) != 0 || st.st_size < 0 ||
      static_cast<std::size_t>(st.st_size) < bytes) {
    return not_ours("is smaller than the " + std::to_string(bytes) + " bytes the call names");
  }
  SharedMemory m;
  m.fd_ = std::move(fd);
  if (bytes == 0) return m;
  void* p = ::mmap(nullptr, bytes, PROT_READ, MAP_SHARED, m.fd_->get(), 0);
  if (p == MAP_FAILED) return os_error("mmap");
  m.data_ = static_cast<char*>(p);
  m.size_ = bytes;
  return m;
}

SharedMemory::SharedMemory(SharedMemory&& other) noexcept
    : fd_(std::move(other.fd_)),
      data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)) {}

SharedMemory& SharedMemory::operator=(SharedMemory&& other) noexcept {
  if (this != &other) {
    unmap();
    fd_ = std::move(other.fd_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

SharedMemory::~SharedMemory() {
  unmap();
}

void SharedMemory::unmap() {
  if (data_) ::munmap(data_, size_);
  data_ = nullptr;
}

}  // namespace kiln
