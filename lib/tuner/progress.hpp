// A one-line progress bar for long tuning runs, on stderr when it is a
// terminal and silent otherwise (logs and CI output stay clean).
#pragma once

#include <chrono>
#include <cstdio>
#include <mutex>
#include <optional>
#include <string>

namespace kiln {

class ProgressBar {
 public:
  // `enabled`: nullopt = when `out` is a terminal.
  ProgressBar(std::string label, std::size_t total, std::FILE* out = stderr,
              std::optional<bool> enabled = std::nullopt);
  ~ProgressBar();
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  void set_total(std::size_t total);
  void compiled(std::size_t n = 1);
  void benchmarked(std::size_t n = 1);
  void failed(std::size_t n = 1);
  // Draws the final state and ends the line (once; also done by the destructor).
  void finish();

  bool enabled() const { return enabled_; }
  // "gemm [##########----------] 16/32 done | 20 compiled | 2 failed | 3.4s"
  std::string render() const;

 private:
  void redraw(bool force);
  std::string render_locked() const;

  std::string label_;
  std::FILE* out_;
  bool enabled_;
  mutable std::mutex mutex_;
  std::size_t total_, compiled_ = 0, benchmarked_ = 0, failed_ = 0;
  bool finished_ = false;
  std::chrono::steady_clock::time_point start_, last_draw_;
};

}  // namespace kiln
