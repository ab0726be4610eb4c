// The DeviceBackend contract, held over every registered backend (and the
// replay bound to a recording): its name and fingerprint, devices or why
// none, memory round trips (the arguments a kernel reads), compiling its
// probe kernel and rejecting a broken one with a log, loading and launching
// the probe, events around a launch, and a kernel that is not in the
// program failing as a value. A backend that cannot run here (no GPU, no
// recording) is checked as far as it can go: its compiler, and the error
// that says why it has no device.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "conformance_subjects.hpp"
#include "kiln/backends/toolchain.hpp"
#include "skip.hpp"

namespace kiln::test {

// gtest prints a subject by its label, not its bytes.
void PrintTo(const ConformanceSubject& s, std::ostream* out) {
  *out << s.label;
}

namespace {

using ::kiln::testing::Skip;

constexpr long kElements = 1000;  // 16 chunks, the last one partial

Specialization probe_spec(const BackendProbe& probe, std::int64_t config) {
  Specialization s;
  s.kernel = "kiln_probe";
  s.config = Config{{"probe", config}};
  s.entry = probe.entry;
  return s;
}

class BackendConformance : public ::testing::TestWithParam<ConformanceSubject> {
 protected:
  const DeviceBackend& backend() const { return *GetParam().backend; }
  bool runs_here() const { return backend().unavailable_reason().empty(); }

  // The probe (config 1) or the broken source (config 2), for `arch`.
  CompileUnit unit(bool broken, const std::string& arch) const {
    const BackendProbe probe = backend().probe();
    CompileUnit u;
    u.kernel = "kiln_probe";
    u.source = broken ? probe.broken : probe.source;
    u.arch = arch;
    u.format = backend().binary_format();
    u.specializations = {probe_spec(probe, broken ? 2 : 1)};
    return u;
  }
  // The compiled probe as the cache would hand it back.
  static Artifact artifact_of(const CompileUnit& u, const CompiledProgram& program) {
    Artifact a;
    a.kernel = u.kernel;
    a.config = u.specializations.at(0).config;
    a.entry = u.specializations.at(0).entry;
    a.lowered_name = program.lowered_names.at(0);
    a.format = program.format;
    a.arch = program.arch;
    a.binary = program.binary;
    return a;
  }
  // A device and the probe compiled for it.
  void open() {
    auto d = backend().open_device(0, 2);
    ASSERT_TRUE(d.ok()) << d.error().describe();
    device_ = std::move(*d);
    unit_ = unit(false, backend().arch_of(*device_));
    auto program = backend().make_compiler()->compile(unit_, CancelToken());
    ASSERT_TRUE(program.ok()) << program.error().describe();
    ASSERT_EQ(program->lowered_names.size(), 1u);
    artifact_ = artifact_of(unit_, *program);
  }
  static LaunchConfig chunks(long n) {
    LaunchConfig c;
    c.grid = {static_cast<std::uint32_t>((n + BackendProbe::kChunk - 1) / BackendProbe::kChunk), 1,
              1};
    c.block = {BackendProbe::kChunk, 1, 1};
    return c;
  }

  std::unique_ptr<Device> device_;
  CompileUnit unit_;
  Artifact artifact_;
};

TEST_P(BackendConformance, HasAUniqueNameThatFindsIt) {
  const std::string name = backend().name();
  ASSERT_FALSE(name.empty());
  for (char c : name) EXPECT_TRUE(std::islower(static_cast<unsigned char>(c)) || c == '_') << name;
  EXPECT_TRUE(is_backend_name(name));
  if (!GetParam().registered) return;
  auto found = find_backend(name);
  ASSERT_TRUE(found.ok()) << found.error().describe();
  EXPECT_EQ(*found, &backend());
  int same = 0;
  for (const DeviceBackend* b : backends()) same += std::string(b->name()) == name;
  EXPECT_EQ(same, 1) << name << " is registered " << same << " times";
}

TEST_P(BackendConformance, FingerprintCarriesItsNameAndCompiler) {
  const ToolchainFingerprint f = backend().fingerprint();
  EXPECT_EQ(f.backend, backend().name());
  EXPECT_EQ(f.compiler, backend().compiler_version());
  EXPECT_FALSE(f.compiler.empty());
  if (GetParam().registered) {
    EXPECT_EQ(current_toolchain(backend().name()).hash(), f.hash());
  }
  // Another backend's keys never collide with this one's.
  for (const DeviceBackend* b : backends()) {
    if (b != &backend() && std::string(b->name()) != backend().name()) {
      EXPECT_NE(b->fingerprint().hash(), f.hash()) << b->name();
    }
  }
}

TEST_P(BackendConformance, HasDevicesOrSaysWhyNot) {
  auto count = backend().device_count();
  if (runs_here()) {
    ASSERT_TRUE(count.ok()) << count.error().describe();
    EXPECT_GE(*count, 1);
    auto d = backend().open_device(0, 1);
    ASSERT_TRUE(d.ok()) << d.error().describe();
    EXPECT_EQ((*d)->properties().ref.backend, backend().name());
    EXPECT_EQ((*d)->properties().ref.index, 0);
    EXPECT_FALSE(backend().arch_of(**d).empty());
    return;
  }
  ASSERT_FALSE(count.ok()) << backend().name() << " says it cannot run, yet counts devices";
  EXPECT_EQ(count.error().code, ErrorCode::kUnavailable);
  EXPECT_FALSE(count.error().message.empty());
  auto d = backend().open_device(0, 1);
  ASSERT_FALSE(d.ok());
  EXPECT_FALSE(d.error().message.empty());
}

TEST_P(BackendConformance, CompilesItsProbeAndRejectsABrokenSourceWithALog) {
  // Of the built-in backends only NVRTC may be absent (a CUDA toolkit is
  // not something setup installs).
  if (backend().compiler_version() == "absent")
    KILN_SKIP(Skip::kCudaToolkit) << backend().name() << "'s compiler does not load here";
  Result<std::string> arch = backend().default_arch();
  if (!arch.ok() && !backend().probe().offline_arch.empty()) arch = backend().probe().offline_arch;
  if (!arch.ok()) {
    // Nothing to compile for (a replay with no recording): it says why.
    EXPECT_EQ(arch.error().code, ErrorCode::kUnavailable) << arch.error().describe();
    EXPECT_FALSE(runs_here());
    return;
  }
  auto compiler = backend().make_compiler();
  auto good = compiler->compile(unit(false, *arch), CancelToken());
  ASSERT_TRUE(good.ok()) << good.error().describe();
  EXPECT_EQ(good->lowered_names.size(), 1u);
  ASSERT_TRUE(good->binary);
  EXPECT_FALSE(good->binary->empty());
  auto bad = compiler->compile(unit(true, *arch), CancelToken());
  ASSERT_FALSE(bad.ok()) << backend().name() << " compiled a broken source";
  EXPECT_EQ(bad.error().code, ErrorCode::kCompileFailed) << bad.error().describe();
  EXPECT_FALSE(bad.error().message.empty());
  EXPECT_TRUE(bad.error().details.contains("log")) << bad.error().describe();
}

// The device half: over the subjects that have a device here (the others
// are held to HasDevicesOrSaysWhyNot).
using BackendDevice = BackendConformance;

TEST_P(BackendDevice, MemoryRoundTripsThroughTheDevice) {
  open();
  if (HasFatalFailure()) return;
  std::vector<float> in(kElements), out(kElements, -1.0f);
  for (long i = 0; i < kElements; ++i) in[i] = std::sin(static_cast<float>(i)) * 3.0f;
  auto buffer = device_->allocate(kElements * sizeof(float));
  ASSERT_TRUE(buffer.ok()) << buffer.error().describe();
  ASSERT_TRUE(device_->copy_to_device(buffer->data(), in.data(), kElements * sizeof(float)).ok());
  ASSERT_TRUE(device_->copy_to_host(out.data(), buffer->data(), kElements * sizeof(float)).ok());
  EXPECT_EQ(in, out);
  ASSERT_TRUE(device_->fill(buffer->data(), 0, kElements * sizeof(float)).ok());
  ASSERT_TRUE(device_->copy_to_host(out.data(), buffer->data(), kElements * sizeof(float)).ok());
  EXPECT_EQ(out, std::vector<float>(kElements, 0.0f));
}

TEST_P(BackendDevice, LaunchesItsProbeBetweenTwoEvents) {
  open();
  if (HasFatalFailure()) return;
  auto kernel = device_->load(artifact_);
  ASSERT_TRUE(kernel.ok()) << kernel.error().describe();
  std::vector<float> x(kElements);
  for (long i = 0; i < kElements; ++i) x[i] = static_cast<float>(i);
  auto buffer = device_->allocate(kElements * sizeof(float));
  ASSERT_TRUE(buffer.ok()) << buffer.error().describe();
  ASSERT_TRUE(device_->copy_to_device(buffer->data(), x.data(), kElements * sizeof(float)).ok());
  auto stream = device_->create_stream();
  auto start = device_->create_event(), stop = device_->create_event();
  ASSERT_TRUE(stream.ok() && start.ok() && stop.ok());
  ASSERT_TRUE(device_->record(*start, &*stream).ok());
  auto launched = device_->launch(*kernel, chunks(kElements),
                                  KernelArgs::of(static_cast<float*>(buffer->data()), kElements));
  ASSERT_TRUE(launched.ok()) << launched.error().describe();
  ASSERT_TRUE(device_->record(*stop, &*stream).ok());
  ASSERT_TRUE(device_->synchronize(&*stream).ok());
  auto ms = device_->elapsed_ms(*start, *stop);
  ASSERT_TRUE(ms.ok()) << ms.error().describe();
  EXPECT_GE(*ms, 0.0f);
  if (!backend().probe().runs_code) return;
  std::vector<float> y(kElements);
  ASSERT_TRUE(device_->copy_to_host(y.data(), buffer->data(), kElements * sizeof(float)).ok());
  for (long i = 0; i < kElements; ++i) ASSERT_EQ(y[i], x[i] + 1.0f) << "element " << i;
}

TEST_P(BackendDevice, AKernelTheProgramLacksFailsAsAValue) {
  open();
  if (HasFatalFailure()) return;
  Artifact missing = artifact_;
  missing.lowered_name = "kiln_no_such_kernel";
  missing.entry = "kiln_no_such_kernel";
  missing.config = Config{{"probe", std::int64_t{3}}};
  std::vector<float> x(kElements, 0.0f);
  auto kernel = device_->load(missing);
  if (!kernel.ok()) {
    EXPECT_FALSE(kernel.error().message.empty());
    return;
  }
  auto launched = device_->launch(*kernel, chunks(kElements), KernelArgs::of(x.data(), kElements));
  ASSERT_FALSE(launched.ok()) << backend().name() << " launched a kernel its program lacks";
  EXPECT_FALSE(launched.error().message.empty());
}

std::string label(const ::testing::TestParamInfo<ConformanceSubject>& info) {
  return info.param.label;
}

std::vector<ConformanceSubject> with_devices() {
  std::vector<ConformanceSubject> out;
  for (const auto& s : conformance_subjects())
    if (s.backend->unavailable_reason().empty()) out.push_back(s);
  return out;
}

INSTANTIATE_TEST_SUITE_P(Backends, BackendConformance, ::testing::ValuesIn(conformance_subjects()),
                         label);
INSTANTIATE_TEST_SUITE_P(Backends, BackendDevice, ::testing::ValuesIn(with_devices()), label);

}  // namespace
}  // namespace kiln::test
