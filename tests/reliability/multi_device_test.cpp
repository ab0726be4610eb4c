// Several benchmark devices, one shared queue: two CPU devices, each with a
// worker (a thread, or a process), each measuring on its own replica of the
// call's arguments. A rendezvous in the kernel proves that both workers took
// configs at the same time: the first launch waits until a second one
// starts, which only the other worker can do.
#include <mutex>

#include "kiln/backends/devices.hpp"

#include "reliability_util.hpp"

namespace kiln {
namespace {

using namespace kiln::test;

// The first launch claims @DIR@/slot0 and waits (up to 20 s) for slot1,
// which the next launch claims; each slot file holds its launcher's pid.
const std::string kRendezvousSource = R"(
#include "kiln/cpu_kernel.h"
extern "C" int getpid(void);
extern "C" int open(const char*, int, ...);
extern "C" int close(int);
extern "C" long write(int, const void*, unsigned long);
extern "C" int access(const char*, int);
extern "C" int usleep(unsigned);
extern "C" int snprintf(char*, unsigned long, const char*, ...);
namespace t {
inline bool claim(const char* path) {
  int fd = open(path, 0100 | 0200 | 01, 0644);  // O_CREAT | O_EXCL | O_WRONLY
  if (fd < 0) return false;
  char text[32];
  int len = snprintf(text, sizeof text, "%d", getpid());
  write(fd, text, static_cast<unsigned long>(len));
  close(fd);
  return true;
}
template <int UNROLL>
void ax(const kiln::cpu::BlockContext& ctx, const float* x, float* y, int n, float a) {
  if (ctx.block_idx.x == 0 && access("@DIR@/slot1", 0) != 0) {
    if (claim("@DIR@/slot0")) {
      for (int i = 0; i < 2000 && access("@DIR@/slot1", 0) != 0; ++i) usleep(10000);
    } else {
      claim("@DIR@/slot1");
    }
  }
)";

TunableKernel rendezvous_kernel(const std::filesystem::path& dir) {
  TunableKernel k;
  k.tmpl.name = "rendezvous_ax";
  k.tmpl.source = with_dir(kRendezvousSource + ax_tail(), dir);
  k.tmpl.entry = "t::ax<{UNROLL}>";
  k.tmpl.space.param("UNROLL", {1, 2, 4, 8});
  k.launch = four_blocks;
  k.outputs = {"y"};
  return k;
}

// The reference is host code: a reference kernel would be the first launch
// and wait for a partner that never comes.
TuneOptions host_reference() {
  TuneOptions to;
  // These tests count the devices and launches of one search: finalists
  // would start the benchmark workers (and open their devices) once more.
  to.search.finalists = 0;
  to.check.reference = ReferenceKind::kUser;
  to.check.reference_fn = [](Device& device, const ArgList& args) -> Status {
    const Arg& x = find_arg(args, "x");
    const Arg& y = find_arg(args, "y");
    const auto n = static_cast<std::size_t>(x.tensor.numel());
    std::vector<float> hx(n), hy(n);
    Status st = device.copy_to_host(hx.data(), x.data, n * sizeof(float));
    for (std::size_t i = 0; i < n; ++i) hy[i] = 3.0f * hx[i];
    if (st.ok()) st = device.copy_to_device(y.data, hy.data(), n * sizeof(float));
    return st;
  };
  return to;
}

// What a worker's device saw: allocations, uploads, launches, and whether a
// launch was given one of the caller's own tensors.
struct Seen {
  std::mutex mutex;
  int devices = 0;
  std::vector<int> launches;  // per device
  std::vector<std::size_t> uploaded;
  bool caller_pointer = false;
};

// A CPU device that counts what reaches it, forwarding everything.
class CountingDevice final : public Device {
 public:
  CountingDevice(std::unique_ptr<Device> inner, std::shared_ptr<Seen> seen,
                 std::vector<const void*> caller)
      : inner_(std::move(inner)), seen_(std::move(seen)), caller_(std::move(caller)) {
    std::lock_guard lock(seen_->mutex);
    index_ = seen_->devices++;
    seen_->launches.push_back(0);
    seen_->uploaded.push_back(0);
  }
  const DeviceProperties& properties() const override { return inner_->properties(); }
  Result<LoadedKernel> load(const Artifact& a) override { return inner_->load(a); }
  Status launch(const LoadedKernel& k, const LaunchConfig& c, const KernelArgs& args) override {
    {
      std::lock_guard lock(seen_->mutex);
      ++seen_->launches[index_];
      for (std::size_t i = 0; i < args.size(); ++i) {
        if (args.type(i) != ArgType::kPointer) continue;
        const void* p = *static_cast<void* const*>(args.value_address(i));
        for (const void* mine : caller_) seen_->caller_pointer |= p == mine;
      }
    }
    return inner_->launch(k, c, args);
  }
  Result<Buffer> allocate(std::size_t bytes) override { return inner_->allocate(bytes); }
  Status copy_to_device(void* d, const void* s, std::size_t n, Stream* st) override {
    {
      std::lock_guard lock(seen_->mutex);
      seen_->uploaded[index_] += n;
    }
    return inner_->copy_to_device(d, s, n, st);
  }
  Status copy_to_host(void* d, const void* s, std::size_t n, Stream* st) override {
    return inner_->copy_to_host(d, s, n, st);
  }
  Status copy(void* d, const void* s, std::size_t n, Stream* st) override {
    return inner_->copy(d, s, n, st);
  }
  Status fill(void* d, std::uint8_t b, std::size_t n, Stream* st) override {
    return inner_->fill(d, b, n, st);
  }
  Result<Stream> create_stream() override { return inner_->create_stream(); }
  Result<Event> create_event() override { return inner_->create_event(); }
  Status record(Event& e, Stream* s) override { return inner_->record(e, s); }
  Result<float> elapsed_ms(const Event& a, const Event& b) override {
    return inner_->elapsed_ms(a, b);
  }
  Status synchronize(Stream* s) override { return inner_->synchronize(s); }
  Status begin_capture(Stream& s) override { return inner_->begin_capture(s); }
  Result<Graph> end_capture(Stream& s) override { return inner_->end_capture(s); }
  Status replay(const Graph& g, Stream* s) override { return inner_->replay(g, s); }
  Status flush_caches(std::span<const DeviceSpan> t, Stream* s) override {
    return inner_->flush_caches(t, s);
  }
  Status delay(double us, Stream* s) override { return inner_->delay(us, s); }

 private:
  std::unique_ptr<Device> inner_;
  std::shared_ptr<Seen> seen_;
  std::vector<const void*> caller_;
  int index_ = 0;
};

void expect_all_measured(const TuneResult& r, const AxCall& call, const std::vector<float>& x0) {
  EXPECT_EQ(r.measurements.size(), 4u);
  EXPECT_EQ(r.stats.benchmarked, 4u);
  for (const auto& m : r.measurements) EXPECT_TRUE(m.ok()) << m.config.to_string() << m.reason();
  EXPECT_EQ(call.x, x0) << "the caller's input is untouched";
}

TEST(MultiDevice, ThreadWorkersShareTheQueueOnReplicas) {
  Scratch s("threads2");
  AxCall call(4096);
  const std::vector<float> x0 = call.x;
  auto seen = std::make_shared<Seen>();
  Backend b = cpu_backend(Isolation::kThread);
  b.bench.devices = {DeviceRef{"cpu", 0}, DeviceRef{"cpu", 1}};
  std::vector<const void*> caller = {call.x.data(), call.y.data()};
  b.bench.open_device = [seen, caller](int) -> Result<std::unique_ptr<Device>> {
    auto inner = cpu::open_device(1);
    if (!inner.ok()) return inner.error();
    return std::unique_ptr<Device>(new CountingDevice(std::move(*inner), seen, caller));
  };
  Autotuner tuner(b, &s.artifacts, &s.tunings);
  auto r = tuner.tune(rendezvous_kernel(s.dir), call.args, *s.device, host_reference());
  ASSERT_TRUE(r.ok()) << r.error().describe();
  expect_all_measured(*r, call, x0);

  std::lock_guard lock(seen->mutex);
  ASSERT_EQ(seen->devices, 2);
  EXPECT_GT(seen->launches[0], 0) << "worker 0 measured nothing";
  EXPECT_GT(seen->launches[1], 0) << "worker 1 measured nothing";
  // Both tensors (2 x 4096 floats) were copied onto each worker's device,
  // and no launch there was given the caller's own memory.
  EXPECT_GE(seen->uploaded[0], 2 * 4096 * sizeof(float));
  EXPECT_GE(seen->uploaded[1], 2 * 4096 * sizeof(float));
  EXPECT_FALSE(seen->caller_pointer);
  EXPECT_TRUE(std::filesystem::exists(s.dir / "slot1")) << "the two workers never overlapped";
  s.expect_caches_clean(1);
}

TEST(MultiDevice, ProcessWorkersOnePerDevice) {
  Scratch s("processes2");
  AxCall call(4096);
  const std::vector<float> x0 = call.x;
  Backend b = cpu_backend(Isolation::kProcess);
  b.bench.devices = {DeviceRef{"cpu", 0}, DeviceRef{"cpu", 1}};
  Autotuner tuner(b, &s.artifacts, &s.tunings);
  TuneOptions to = host_reference();
  to.pipeline.trace_path = (s.dir / "trace.json").string();
  auto r = tuner.tune(rendezvous_kernel(s.dir), call.args, *s.device, to);
  ASSERT_TRUE(r.ok()) << r.error().describe();
  expect_all_measured(*r, call, x0);

  // The two overlapping launches ran in two worker processes.
  const std::string a = read_text(s.dir / "slot0"), c = read_text(s.dir / "slot1");
  ASSERT_FALSE(a.empty());
  ASSERT_FALSE(c.empty()) << "the two workers never overlapped";
  EXPECT_NE(a, c);
  EXPECT_NE(a, std::to_string(::getpid()));
  EXPECT_NE(c, std::to_string(::getpid()));
  const std::string trace = read_text(s.dir / "trace.json");
  EXPECT_NE(trace.find("bench 0 (cpu, process)"), std::string::npos);
  EXPECT_NE(trace.find("bench 1 (cpu, process)"), std::string::npos);
  s.expect_caches_clean(1);
}

TEST(MultiDevice, DeviceListsAndOpeningByReference) {
  auto refs = parse_device_list("cuda:0,cuda:3,cpu,cpu:1,2");
  ASSERT_EQ(refs.size(), 5u);
  EXPECT_EQ(refs[1], (DeviceRef{"cuda", 3}));
  EXPECT_EQ(refs[2], (DeviceRef{"cpu", 0}));
  EXPECT_EQ(refs[3], (DeviceRef{"cpu", 1}));
  EXPECT_EQ(refs[4], (DeviceRef{"cuda", 2}));
  EXPECT_EQ(parse_device_list("1", "cpu")[0], (DeviceRef{"cpu", 1}));
  for (const char* bad : {"gpu0", "cuda:x", "cuda:-1", "0,,1", "cpu1"}) {
    EXPECT_THROW(parse_device_list(bad), Error) << bad;
  }
  auto cpu = open_device(DeviceRef{"cpu", 1}, 2);
  ASSERT_TRUE(cpu.ok()) << cpu.error().describe();
  EXPECT_EQ((*cpu)->properties().sm_count, 2);
}

}  // namespace
}  // namespace kiln
