// The replay as a registered backend ("replay", backends/backends.cpp), so
// that it is reached like the others and held to the same conformance suite.
// A recording is what gives it a device: the registered one has none and
// says so; make_replay_backend(book) binds one (the lab does, per run).
#include "kiln/backends/replay.hpp"
#include "kiln/core/error.hpp"
#include "kiln/device/backend.hpp"

namespace kiln::replay {

namespace {

constexpr const char* kNoRecording =
    "the replay backend has no recording: it plays a recorded space, which "
    "`kiln-lab tune --recorded FILE` (or make_replay_backend) binds";

// Nothing recorded: every config "is not in the recorded file".
class EmptyRecording final : public ReplaySource {
 public:
  const ReplayRecord* find(const std::string&) const override { return nullptr; }
  std::string device() const override { return "nothing"; }
};

class ReplayBackend final : public DeviceBackend {
 public:
  explicit ReplayBackend(std::shared_ptr<ReplayBook> book) : book_(std::move(book)) {}

  const char* name() const override { return "replay"; }
  std::string unavailable_reason() const override { return book_ ? "" : kNoRecording; }
  std::string compiler_version() const override { return "1"; }
  std::unique_ptr<Compiler> make_compiler(const Options&) const override {
    static const EmptyRecording empty;
    auto book = book_ ? book_ : std::make_shared<ReplayBook>(empty, real_clock(), 0.0);
    return replay_compiler(std::move(book));
  }
  bool compiles_in_workers() const override { return false; }
  // The recording's GPU compiled CUBINs; nothing is ever loaded from them.
  BinaryFormat binary_format() const override { return BinaryFormat::kCubin; }
  Result<int> device_count() const override {
    if (!book_) return make_error(ErrorCode::kUnavailable, kNoRecording);
    return 1;
  }
  Result<std::unique_ptr<Device>> open_device(int index, int) const override {
    if (!book_) return make_error(ErrorCode::kUnavailable, kNoRecording);
    if (index != 0) {
      return make_error(ErrorCode::kInvalidArgument,
                        "a recording has one device (index 0), not " + std::to_string(index));
    }
    return make_replay_device(book_);
  }
  std::string arch_of(const Device&) const override { return "recorded"; }
  Result<std::string> default_arch() const override {
    if (!book_) return make_error(ErrorCode::kUnavailable, kNoRecording);
    return std::string("recorded");
  }
  // `kiln info` has no replay section: its fingerprint is listed alone.
  void report(ToolchainReport&) const override {}
  // A recording compiles by config, not by source: `source` and `broken`
  // are placeholders, and a launch only reads its recorded time.
  BackendProbe probe() const override {
    BackendProbe p;
    p.source = "recorded";
    p.broken = "recorded";
    p.runs_code = false;
    return p;
  }

 private:
  std::shared_ptr<ReplayBook> book_;
};

}  // namespace

const DeviceBackend& backend() {
  static const ReplayBackend unbound(nullptr);
  return unbound;
}

std::unique_ptr<DeviceBackend> make_replay_backend(std::shared_ptr<ReplayBook> book) {
  return std::make_unique<ReplayBackend>(std::move(book));
}

}  // namespace kiln::replay
