#include "tuner/trace.hpp"

#include <unistd.h>

#include <algorithm>
#include <fstream>

#include "kiln/device/clock.hpp"

namespace kiln {

TraceRecorder::TraceRecorder() : origin_(Clock::now()) {}

int TraceRecorder::track(const std::string& name) {
  std::lock_guard<std::mutex> lock(mutex_);
  // The same name is the same worker (a search runs the pipeline once per
  // round): its spans stay on one track.
  auto it = std::find(tracks_.begin(), tracks_.end(), name);
  if (it != tracks_.end()) return static_cast<int>(it - tracks_.begin()) + 1;
  tracks_.push_back(name);
  return static_cast<int>(tracks_.size());  // tid 0 is avoided: some viewers hide it
}

void TraceRecorder::span(int track, std::string name, std::string category, Clock::time_point start,
                         Clock::time_point end, nlohmann::json args) {
  auto us = [&](Clock::time_point t) {
    return std::chrono::duration<double, std::micro>(t - origin_).count();
  };
  Span s{track, std::move(name), std::move(category), us(start), us(end), std::move(args)};
  std::lock_guard<std::mutex> lock(mutex_);
  spans_.push_back(std::move(s));
}

std::size_t TraceRecorder::span_count() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return spans_.size();
}

nlohmann::json TraceRecorder::to_json() const {
  std::lock_guard<std::mutex> lock(mutex_);
  nlohmann::json events = nlohmann::json::array();
  const int pid = static_cast<int>(getpid());
  events.push_back({{"name", "process_name"},
                    {"ph", "M"},
                    {"pid", pid},
                    {"tid", 0},
                    {"args", {{"name", "kiln tuning"}}}});
  for (std::size_t i = 0; i < tracks_.size(); ++i) {
    int tid = static_cast<int>(i + 1);
    events.push_back({{"name", "thread_name"},
                      {"ph", "M"},
                      {"pid", pid},
                      {"tid", tid},
                      {"args", {{"name", tracks_[i]}}}});
    // Keeps the tracks in creation order in the viewer.
    events.push_back({{"name", "thread_sort_index"},
                      {"ph", "M"},
                      {"pid", pid},
                      {"tid", tid},
                      {"args", {{"sort_index", tid}}}});
  }
  for (const auto& s : spans_) {
    events.push_back({{"name", s.name},
                      {"cat", s.category},
                      {"ph", "X"},
                      {"ts", s.start_us},
                      {"dur", s.end_us - s.start_us},
                      {"pid", pid},
                      {"tid", s.track},
                      {"args", s.args}});
  }
  return {{"traceEvents", events}, {"displayTimeUnit", "ms"}};
}

Result<std::filesystem::path> TraceRecorder::write(const std::filesystem::path& path) const {
  std::filesystem::path tmp = path;
  tmp += ".tmp." + std::to_string(getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) {
      return make_error(ErrorCode::kIo, "cannot write the trace to " + tmp.string() +
                                            ": check that the directory exists and is writable");
    }
    out << to_json().dump() << '\n';
    if (!out.flush())
      return make_error(ErrorCode::kIo, "writing the trace to " + tmp.string() + " failed");
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    return make_error(ErrorCode::kIo, "cannot move the trace into place at " + path.string());
  }
  return path;
}

std::vector<std::pair<double, double>> TraceRecorder::intervals(const std::string& category) const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::pair<double, double>> out;
  for (const auto& s : spans_) {
    if (s.category == category) out.emplace_back(s.start_us * 1e-6, s.end_us * 1e-6);
  }
  return out;
}

double TraceRecorder::overlap_seconds(const std::string& a, const std::string& b) const {
  return intersection_length(intervals(a), intervals(b));
}

double TraceRecorder::busy_seconds(const std::string& category) const {
  return union_length(intervals(category));
}

}  // namespace kiln
