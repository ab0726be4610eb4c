#include "tuner/progress.hpp"

#include <unistd.h>

#include <algorithm>

namespace kiln {

namespace {
constexpr int kWidth = 24;
// Redraws are rate-limited: a terminal repaint per kernel would cost more
// than a fast benchmark.
constexpr auto kMinInterval = std::chrono::milliseconds(100);
}  // namespace

ProgressBar::ProgressBar(std::string label, std::size_t total, std::FILE* out,
                         std::optional<bool> enabled)
    : label_(std::move(label)),
      out_(out),
      enabled_(enabled.value_or(out != nullptr && isatty(fileno(out)) != 0)),
      total_(total),
      start_(std::chrono::steady_clock::now()) {}

ProgressBar::~ProgressBar() {
  finish();
}

void ProgressBar::set_total(std::size_t total) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    total_ = total;
  }
  redraw(false);
}

void ProgressBar::compiled(std::size_t n) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    compiled_ += n;
  }
  redraw(false);
}

void ProgressBar::benchmarked(std::size_t n) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    benchmarked_ += n;
  }
  redraw(false);
}

void ProgressBar::failed(std::size_t n) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    failed_ += n;
  }
  redraw(false);
}

void ProgressBar::finish() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (finished_) return;
  finished_ = true;
  if (!enabled_) return;
  std::string line = "\r" + render_locked() + "\n";
  std::fputs(line.c_str(), out_);
  std::fflush(out_);
}

std::string ProgressBar::render() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return render_locked();
}

std::string ProgressBar::render_locked() const {
  std::size_t done = benchmarked_ + failed_;
  double fraction =
      total_ ? std::min(1.0, static_cast<double>(done) / static_cast<double>(total_)) : 0;
  int filled = static_cast<int>(fraction * kWidth + 0.5);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  char tail[128];
  std::snprintf(tail, sizeof tail, "] %zu/%zu done | %zu compiled | %zu failed | %.1fs", done,
                total_, compiled_, failed_, seconds);
  return label_ + " [" + std::string(static_cast<std::size_t>(filled), '#') +
         std::string(static_cast<std::size_t>(kWidth - filled), '-') + tail;
}

void ProgressBar::redraw(bool force) {
  if (!enabled_) return;
  std::lock_guard<std::mutex> lock(mutex_);
  if (finished_) return;
  auto now = std::chrono::steady_clock::now();
  if (!force && now - last_draw_ < kMinInterval) return;
  last_draw_ = now;
  // \r and clear-to-end-of-line: the line shrinks cleanly when counts do.
  std::string line = "\r" + render_locked() + "\033[K";
  std::fputs(line.c_str(), out_);
  std::fflush(out_);
}

}  // namespace kiln
