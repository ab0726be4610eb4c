// docs/architecture.md's "Extending Kiln" recipe for a backend, followed: a
// toy backend in one file (here, a test's; in Kiln, a folder under
// backends/) plus one line that registers it. Its language is one
// statement, "add V" (x[i] += V for i < n), its device the host's memory
// and clock. The conformance suite (conformance_test.cpp) then holds it to
// the contract with no edit of its own, and the checks below find it where
// Kiln looks for backends.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <sstream>

#include "kiln/backends/devices.hpp"
#include "kiln/backends/toolchain.hpp"
#include "kiln/device/backend.hpp"
#include "kiln/device/host_memory.hpp"

namespace kiln::test {
namespace {

constexpr const char* kToy = "toy";

// "add 1.5" -> 1.5; nullopt for anything else.
std::optional<float> parse_add(const std::string& source) {
  std::istringstream in(source);
  std::string word;
  float value = 0;
  if (!(in >> word >> value) || word != "add" || !(in >> std::ws).eof()) return std::nullopt;
  return value;
}

class ToyCompiler final : public Compiler {
 public:
  std::string name() const override { return kToy; }
  std::string version() const override { return "1"; }
  std::vector<std::string> code_options() const override { return {}; }
  Result<CompiledProgram> compile(const CompileUnit& unit, const CancelToken&) override {
    if (!parse_add(unit.source)) {
      const std::string log = "toy: expected \"add V\", got \"" + unit.source + "\"\n";
      return make_error(ErrorCode::kCompileFailed, "the toy compiler rejected " + unit.kernel,
                        {{"log", log}, {"options", ""}});
    }
    CompiledProgram program;
    program.format = unit.format;
    program.arch = unit.arch;
    program.binary = std::make_shared<const std::string>(unit.source);
    for (const auto& spec : unit.specializations) program.lowered_names.push_back(spec.entry);
    return program;
  }
};

struct ToyKernel final : detail::HandleState {
  float add = 0;
};
struct Stamp final : detail::HandleState {
  std::chrono::steady_clock::time_point at;
};

class ToyDevice final : public HostMemoryDevice {
 public:
  ToyDevice() {
    props_.ref = DeviceRef{kToy, 0};
    props_.name = "toy device";
    props_.arch = "toy";
  }
  const DeviceProperties& properties() const override { return props_; }
  Result<LoadedKernel> load(const Artifact& artifact) override {
    auto add = parse_add(*artifact.binary);
    if (!add || artifact.lowered_name != "kiln_probe") {
      return make_error(ErrorCode::kLaunchFailed,
                        "the toy program has no kernel '" + artifact.lowered_name + "'");
    }
    auto state = std::make_unique<ToyKernel>();
    state->owner = this;
    state->add = *add;
    return LoadedKernel(std::move(state), artifact.lowered_name, artifact.config.to_string());
  }
  Status launch(const LoadedKernel& kernel, const LaunchConfig& config,
                const KernelArgs& args) override {
    if (args.size() != 2 || args.type(0) != ArgType::kPointer || args.type(1) != ArgType::kI64) {
      return make_error(ErrorCode::kLaunchFailed, "toy kernel " + kernel.name() +
                                                      " takes (ptr, i64), not " + args.signature());
    }
    std::uintptr_t address = 0;
    std::int64_t n = 0;
    std::memcpy(&address, args.value_address(0), sizeof address);
    std::memcpy(&n, args.value_address(1), sizeof n);
    auto* x = reinterpret_cast<float*>(address);
    const float add = kernel.state_for<ToyKernel>(*this, "kernel").add;
    const std::int64_t end =
        std::min<std::int64_t>(n, std::int64_t{config.grid.x} * config.block.x);
    for (std::int64_t i = 0; i < end; ++i) x[i] += add;
    return ok_status();
  }
  Result<Stream> create_stream() override { return Stream(owned<Stamp>()); }
  Result<Event> create_event() override { return Event(owned<Stamp>()); }
  Status record(Event& event, Stream*) override {
    event.state_for<Stamp>(*this, "event").at = std::chrono::steady_clock::now();
    return ok_status();
  }
  Result<float> elapsed_ms(const Event& start, const Event& stop) override {
    const auto& a = start.state_for<Stamp>(*this, "start event");
    const auto& b = stop.state_for<Stamp>(*this, "stop event");
    return std::chrono::duration<float, std::milli>(b.at - a.at).count();
  }

 private:
  template <class S>
  std::unique_ptr<detail::HandleState> owned() {
    auto s = std::make_unique<S>();
    s->owner = this;
    return s;
  }
  DeviceProperties props_;
};

class ToyBackend final : public DeviceBackend {
 public:
  const char* name() const override { return kToy; }
  std::string unavailable_reason() const override { return {}; }
  std::string compiler_version() const override { return "toy 1"; }
  std::unique_ptr<Compiler> make_compiler(const Options&) const override {
    return std::make_unique<ToyCompiler>();
  }
  bool compiles_in_workers() const override { return false; }
  BinaryFormat binary_format() const override { return BinaryFormat::kCpuObject; }
  Result<int> device_count() const override { return 1; }
  Result<std::unique_ptr<Device>> open_device(int, int) const override {
    return std::unique_ptr<Device>(std::make_unique<ToyDevice>());
  }
  std::string arch_of(const Device&) const override { return "toy"; }
  Result<std::string> default_arch() const override { return std::string("toy"); }
  void report(ToolchainReport&) const override {}
  BackendProbe probe() const override {
    BackendProbe p;
    p.source = "add 1";
    p.broken = "multiply 2";
    return p;
  }
};

const ToyBackend kToyBackend;
// The recipe's one line.
const bool kRegistered = (register_backend(kToyBackend), true);

TEST(ExtendingBackend, TheRegisteredToyIsFoundWhereKilnLooks) {
  ASSERT_TRUE(kRegistered);
  auto found = find_backend(kToy);
  ASSERT_TRUE(found.ok()) << found.error().describe();
  EXPECT_EQ(*found, &kToyBackend);
  EXPECT_EQ(current_toolchain(kToy).compiler, "toy 1");
  EXPECT_EQ(parse_device_list("toy:0,cpu").front(), (DeviceRef{kToy, 0}));
  auto device = open_device(DeviceRef{kToy, 0});
  ASSERT_TRUE(device.ok()) << device.error().describe();
  EXPECT_EQ((*device)->properties().ref.to_string(), "toy:0");
}

TEST(ExtendingBackend, ASecondBackendOfTheSameNameIsRefused) {
  try {
    register_backend(kToyBackend);
    FAIL() << "registered twice";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("registered already"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kiln::test
