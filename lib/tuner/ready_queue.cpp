#include "ready_queue.hpp"

namespace kiln::internal {

bool ReadyQueue::push(Artifact& artifact) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (closed_) return false;
    items_.push_back(std::move(artifact));
  }
  changed_.notify_one();
  return true;
}

std::optional<Artifact> ReadyQueue::pop() {
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [&] { return closed_ || !items_.empty(); });
  if (closed_) return std::nullopt;
  Artifact a = std::move(items_.front());
  items_.pop_front();
  return a;
}

std::vector<Artifact> ReadyQueue::close(const std::string& reason) {
  std::vector<Artifact> left;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!closed_) reason_ = reason;
    closed_ = true;
    left.assign(std::make_move_iterator(items_.begin()), std::make_move_iterator(items_.end()));
    items_.clear();
  }
  changed_.notify_all();
  return left;
}

bool ReadyQueue::closed() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return closed_;
}

std::string ReadyQueue::close_reason() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return reason_;
}

std::size_t ReadyQueue::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return items_.size();
}

}  // namespace kiln::internal
