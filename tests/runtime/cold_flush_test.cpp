// The CPU device's cold-cache flush (Device::flush_caches): it evicts the
// kernel's own buffers with a cache-line flush found at run time, names no
// byte outside them (guard pages fault if it does), keeps their contents,
// copies its list into a graph, and costs the buffers, not the machine's
// last-level cache: it allocates nothing. Its own executable, because it
// counts heap allocations by replacing the global operator new.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <new>
#include <string>
#include <string_view>
#include <vector>

#include "cpu/runtime/cache_flush.hpp"
#include "kiln/backends/cpu.hpp"
#include "skip.hpp"

namespace {

// Heap bytes asked for by the thread that set `counting`.
thread_local bool counting = false;
std::atomic<std::size_t> counted_bytes{0};

void* counted_malloc(std::size_t n) {
  if (counting) counted_bytes += n;
  return std::malloc(n ? n : 1);
}

}  // namespace

// Every replaceable form that pairs with free(), so no allocation made here
// is released by another allocator (ASan checks the pairing). Not inlined:
// GCC would then see free() on what `new` returned and warn of a mismatch.
[[gnu::noinline]] void* operator new(std::size_t n) {
  if (void* p = counted_malloc(n)) return p;
  throw std::bad_alloc();
}
[[gnu::noinline]] void* operator new[](std::size_t n) {
  if (void* p = counted_malloc(n)) return p;
  throw std::bad_alloc();
}
[[gnu::noinline]] void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  return counted_malloc(n);
}
[[gnu::noinline]] void* operator new[](std::size_t n, const std::nothrow_t&) noexcept {
  return counted_malloc(n);
}
[[gnu::noinline]] void operator delete(void* p) noexcept {
  std::free(p);
}
[[gnu::noinline]] void operator delete[](void* p) noexcept {
  std::free(p);
}
[[gnu::noinline]] void operator delete(void* p, std::size_t) noexcept {
  std::free(p);
}
[[gnu::noinline]] void operator delete[](void* p, std::size_t) noexcept {
  std::free(p);
}
[[gnu::noinline]] void operator delete(void* p, const std::nothrow_t&) noexcept {
  std::free(p);
}
[[gnu::noinline]] void operator delete[](void* p, const std::nothrow_t&) noexcept {
  std::free(p);
}

namespace kiln {
namespace {

// One readable and writable page between two that fault on any access,
// flush included (CLFLUSH checks the page like a load).
class GuardedPage {
 public:
  GuardedPage() : page_(static_cast<std::size_t>(sysconf(_SC_PAGESIZE))) {
    void* m = mmap(nullptr, 3 * page_, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) return;
    base_ = static_cast<unsigned char*>(m);
    if (mprotect(base_ + page_, page_, PROT_READ | PROT_WRITE) != 0) {
      munmap(base_, 3 * page_);
      base_ = nullptr;
    }
  }
  ~GuardedPage() {
    if (base_) munmap(base_, 3 * page_);
  }
  GuardedPage(const GuardedPage&) = delete;
  GuardedPage& operator=(const GuardedPage&) = delete;

  bool ok() const { return base_ != nullptr; }
  unsigned char* data() const { return base_ + page_; }
  std::size_t size() const { return page_; }
  unsigned char* fault_below() const { return base_; }

 private:
  std::size_t page_;
  unsigned char* base_ = nullptr;
};

class ColdFlush : public ::testing::Test {
 protected:
  void SetUp() override {
    auto d = cpu::open_device(2);
    ASSERT_TRUE(d.ok()) << d.error().describe();
    device_ = std::move(*d);
  }
  std::unique_ptr<Device> device_;
};

TEST_F(ColdFlush, UsesTheCacheLineFlushThisCpuHas) {
#if defined(__x86_64__)
  // Every x86-64 CPU has CLFLUSH; the kernel lists "clflushopt" in its
  // flags only when CPUID has the bit the device reads.
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  bool listed = false;
  while (std::getline(in, line)) {
    if (line.rfind("flags", 0) != 0) continue;
    listed = (line + " ").find(" clflushopt ") != std::string::npos;
    break;
  }
  const std::string_view used = cpu::cache_flush_instruction();
  if (listed) {
    EXPECT_EQ(used, "clflushopt");
  }
  EXPECT_TRUE(used == "clflushopt" || used == "clflush") << used;
#else
  KILN_SKIP(Skip::kHost) << "no cache-line flush instruction on this architecture";
#endif
}

TEST_F(ColdFlush, EvictsAMultiMiBBufferAndKeepsEveryByte) {
  constexpr std::size_t kBytes = std::size_t{12} << 20;
  auto buffer = device_->allocate(kBytes);
  ASSERT_TRUE(buffer.ok()) << buffer.error().describe();
  auto* bytes = static_cast<unsigned char*>(buffer->data());
  for (std::size_t i = 0; i < kBytes; ++i) bytes[i] = static_cast<unsigned char>(i * 131 + 7);
  const DeviceSpan touched[] = {{buffer->data(), kBytes}, {buffer->data(), kBytes / 2}};
  ASSERT_TRUE(device_->flush_caches(touched).ok());
  ASSERT_TRUE(device_->flush_caches({}).ok());  // a kernel without tensors
  ASSERT_TRUE(device_->synchronize().ok());
  for (std::size_t i = 0; i < kBytes; ++i) {
    ASSERT_EQ(bytes[i], static_cast<unsigned char>(i * 131 + 7)) << i;
  }
}

TEST_F(ColdFlush, OddSpansNameNoByteOutsideThemselves) {
  GuardedPage page;
  ASSERT_TRUE(page.ok());
  unsigned char* p = page.data();
  const std::size_t n = page.size();
  for (std::size_t i = 0; i < n; ++i) p[i] = static_cast<unsigned char>(i ^ 0x5a);
  // Spans flush against both guard pages, start and end off a line, are
  // one byte long or empty: a flush of a byte outside faults.
  const DeviceSpan
      touched[] =
          {
              {p, n},       {p + 3, n - 3}, {p, n - 5},     {p + n - 1, 1},
              {p + 61, 7},  {p + 63, 2},    {p + 1, 1001},  {p + n, 0},
              {nullptr, 0}, {p, 0},         {nullptr, 4096}  // no address: nothing to flush
          };
  ASSERT_TRUE(device_->flush_caches(touched).ok());
  for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(p[i], static_cast<unsigned char>(i ^ 0x5a)) << i;

  // Heap blocks of odd sizes covered exactly, for ASan's redzones.
  for (std::size_t size : {1u, 7u, 63u, 65u, 1001u, 4099u}) {
    std::vector<unsigned char> block(size, 0xa5);
    const DeviceSpan exact[] = {{block.data(), block.size()}};
    ASSERT_TRUE(device_->flush_caches(exact).ok()) << size;
    for (unsigned char v : block) ASSERT_EQ(v, 0xa5) << size;
  }
}

TEST_F(ColdFlush, ACapturedFlushKeepsItsOwnCopyOfTheList) {
  GuardedPage page;
  ASSERT_TRUE(page.ok());
  auto stream = device_->create_stream().value();
  ASSERT_TRUE(device_->begin_capture(stream).ok());
  std::vector<DeviceSpan> touched = {{page.data(), page.size()}};
  ASSERT_TRUE(device_->flush_caches(touched, &stream).ok());
  auto graph = device_->end_capture(stream);
  ASSERT_TRUE(graph.ok()) << graph.error().describe();
  // The caller's list now names a page that faults: a graph that kept a
  // reference to it, not a copy, would flush that page when it replays.
  touched[0] = {page.fault_below(), 64};
  for (int rep = 0; rep < 3; ++rep) ASSERT_TRUE(device_->replay(*graph, &stream).ok());
}

// The old flush wrote a buffer twice the reported last-level cache (960 MiB
// per repetition on a VM reporting a 480 MiB L3) and allocated it on first
// use. Now nothing is allocated, whatever the cache and the spans' size.
TEST_F(ColdFlush, CostsTheSpansNotTheLastLevelCache) {
  std::vector<unsigned char> small(4096, 1);
  const DeviceSpan touched[] = {{small.data(), small.size()}};
  counted_bytes = 0;
  counting = true;
  Status first = device_->flush_caches(touched);
  Status second = device_->flush_caches(touched);
  counting = false;
  ASSERT_TRUE(first.ok()) << first.error().describe();
  ASSERT_TRUE(second.ok()) << second.error().describe();
  EXPECT_EQ(counted_bytes.load(), 0u)
      << "a flush of 4 KiB allocated " << counted_bytes.load() << " bytes (the device reports a "
      << device_->properties().l2_bytes << "-byte last-level cache)";
}

}  // namespace
}  // namespace kiln
