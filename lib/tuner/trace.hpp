// A timeline of a tuning run in the Chrome trace format (viewable in Perfetto
// and chrome://tracing): one track per worker, one span per compile unit and
// per benchmark, so the overlap of compiling and benchmarking can be seen.
#pragma once

#include <chrono>
#include <filesystem>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kiln/core/error.hpp"

namespace kiln {

class TraceRecorder {
 public:
  using Clock = std::chrono::steady_clock;

  TraceRecorder();  // time zero is now

  // A track for one worker ("compile 0", "bench cuda:0"); returns its id,
  // the same id again for a name seen before.
  int track(const std::string& name);
  void span(int track, std::string name, std::string category, Clock::time_point start,
            Clock::time_point end, nlohmann::json args = nlohmann::json::object());

  // Records a span from construction to destruction.
  class Scope {
   public:
    Scope(TraceRecorder* recorder, int track, std::string name, std::string category)
        : recorder_(recorder),
          track_(track),
          name_(std::move(name)),
          category_(std::move(category)),
          start_(Clock::now()) {}
    ~Scope() {
      if (recorder_) recorder_->span(track_, name_, category_, start_, Clock::now(), args);
    }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;
    nlohmann::json args = nlohmann::json::object();

   private:
    TraceRecorder* recorder_;
    int track_;
    std::string name_, category_;
    Clock::time_point start_;
  };

  std::size_t span_count() const;
  // {"traceEvents": [...], "displayTimeUnit": "ms"}: complete events ("ph":
  // "X") with microsecond ts/dur, and thread_name metadata per track.
  nlohmann::json to_json() const;
  // Written to a temporary file and renamed, so a reader never sees half a trace.
  Result<std::filesystem::path> write(const std::filesystem::path& path) const;

  // Seconds during which spans of both categories were running at once
  // (the measure of the intersection of their unions).
  double overlap_seconds(const std::string& category_a, const std::string& category_b) const;
  // Seconds covered by at least one span of `category`.
  double busy_seconds(const std::string& category) const;

 private:
  struct Span {
    int track;
    std::string name, category;
    double start_us, end_us;
    nlohmann::json args;
  };
  std::vector<std::pair<double, double>> intervals(const std::string& category) const;

  Clock::time_point origin_;
  mutable std::mutex mutex_;
  std::vector<std::string> tracks_;
  std::vector<Span> spans_;
};

}  // namespace kiln
