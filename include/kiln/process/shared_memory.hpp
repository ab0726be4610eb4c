// Memory one process fills and other processes map: how a tuning call's
// argument bytes reach its benchmark worker processes without streaming
// them through each worker's socket.
//
// The parent creates an anonymous memory file (memfd_create: not a name in
// /dev/shm, so nothing is left behind when the parent dies, and not bound
// by a container's small /dev/shm), fills it, then seals it against writes
// and size changes and keeps only a read-only view. Its descriptor travels
// with a worker message (SCM_RIGHTS, process/worker_process.hpp); the worker
// maps it read-only and checks the seals, so neither side can change the
// bytes the other reads, and a worker that crashes leaves them as they were.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "kiln/core/error.hpp"
#include "kiln/process/worker_protocol.hpp"

namespace kiln {

class SharedMemory {
 public:
  // `bytes` > 0 of zeroed memory, writable until seal(); `name` shows in
  // /proc/<pid>/fd for whoever debugs. kUnavailable naming the call that
  // failed (memfd_create, ftruncate, mmap) and its errno.
  [[nodiscard]] static Result<SharedMemory> create(std::size_t bytes, const std::string& name);
  // A received descriptor, mapped read-only. kCorrupt when it is not a
  // sealed memory file of at least `bytes` (a parent of another build, a
  // descriptor that is something else).
  [[nodiscard]] static Result<SharedMemory> map(worker::SharedFd fd, std::size_t bytes);

  SharedMemory(SharedMemory&& other) noexcept;
  SharedMemory& operator=(SharedMemory&& other) noexcept;
  SharedMemory(const SharedMemory&) = delete;
  SharedMemory& operator=(const SharedMemory&) = delete;
  ~SharedMemory();

  // No more writes, growth or shrinking, by anyone; the view becomes
  // read-only. kUnavailable with the errno when the kernel refuses.
  [[nodiscard]] Status seal();

  // Writable before seal(), read-only after (and always for a mapped one).
  char* data() { return data_; }
  const char* data() const { return data_; }
  std::size_t size() const { return size_; }
  // What travels with a message.
  const worker::SharedFd& fd() const { return fd_; }

 private:
  SharedMemory() = default;
  void unmap();

  worker::SharedFd fd_;
  char* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace kiln
