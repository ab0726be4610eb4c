// The in-memory layer of the artifact cache: a byte-bounded LRU map from key
// to a shared, immutable artifact. Entries are content-addressed, so what is
// held here can never go stale, only be evicted. Thread-safe.
#pragma once

#include <chrono>
#include <list>
#include <map>
#include <memory>
#include <mutex>

#include "kiln/cache/artifact_cache.hpp"

namespace kiln {

class ArtifactCache::Memory {
 public:
  explicit Memory(std::uint64_t max_bytes) : max_bytes_(max_bytes) {}

  struct Hit {
    std::shared_ptr<const CachedArtifact> artifact;
    // Set at most once per kTouchInterval per entry: the caller then
    // refreshes the disk entry's last-use time so other processes' LRU
    // eviction sees that this one still uses it.
    bool touch_due = false;
  };

  Hit get(const Hash128& key) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = index_.find(key);
    if (it == index_.end()) return {};
    order_.splice(order_.begin(), order_, it->second);
    Slot& slot = *it->second;
    auto now = std::chrono::steady_clock::now();
    bool due = now - slot.last_touch > kTouchInterval;
    if (due) slot.last_touch = now;
    return {slot.artifact, due};
  }

  void put(const Hash128& key, std::shared_ptr<const CachedArtifact> artifact) {
    std::uint64_t bytes = artifact->binary.size() + 256;  // + a rough metadata share
    if (bytes > max_bytes_) return;
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto it = index_.find(key); it != index_.end()) {
      used_ -= it->second->bytes;
      order_.erase(it->second);
      index_.erase(it);
    }
    order_.push_front(Slot{key, std::move(artifact), bytes, std::chrono::steady_clock::now()});
    index_[key] = order_.begin();
    used_ += bytes;
    while (used_ > max_bytes_ && !order_.empty()) {
      used_ -= order_.back().bytes;
      index_.erase(order_.back().key);
      order_.pop_back();
    }
  }

  void clear() {
    std::lock_guard<std::mutex> lock(mutex_);
    index_.clear();
    order_.clear();
    used_ = 0;
  }

 private:
  static constexpr std::chrono::seconds kTouchInterval{30};
  struct Slot {
    Hash128 key;
    std::shared_ptr<const CachedArtifact> artifact;
    std::uint64_t bytes;
    std::chrono::steady_clock::time_point last_touch;
  };
  std::mutex mutex_;
  std::uint64_t max_bytes_;
  std::uint64_t used_ = 0;
  std::list<Slot> order_;  // most recently used first
  std::map<Hash128, std::list<Slot>::iterator> index_;
};

}  // namespace kiln
