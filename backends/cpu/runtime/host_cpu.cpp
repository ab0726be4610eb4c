// The host CPU's name and features without LLVM.
//
// NOTES: why remember LLVM's answer instead of deriving the name from
// cpuid here: the name ("znver5") is the CPU device's arch, so it names
// the device in every tuning record, and it and the feature hash enter
// every CPU artifact key. Deriving them without LLVM would need LLVM's
// table of CPU models and feature rules (which change between LLVM
// releases) copied here, and any difference would make a warm process miss
// what a cold one stored, or rename the device of existing records. So
// LLVM stays the one source, and its answer is remembered in a small file
// named by what LLVM derives it from: the raw cpuid leaves and xgetbv
// (per-core fields masked) and the LLVM version. Another machine, another
// VM's CPU mask or another LLVM is another file; a missing, unreadable or
// damaged file only means asking LLVM once more (and writing it again).
// Off x86-64 there is no cpuid signature and LLVM is always asked.
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cpu_runtime.hpp"
#include "kiln/core/hash.hpp"
#include "kiln/core/log.hpp"
#include "kiln/core/options.hpp"

#if defined(__x86_64__)
#include <cpuid.h>
#endif

#ifndef KILN_LLVM_VERSION
#error "KILN_LLVM_VERSION must be defined by the build (backends/cpu/CMakeLists.txt)"
#endif

namespace kiln::cpu {

const char* llvm_version() {
  return KILN_LLVM_VERSION;
}

namespace {

// Bumped when the file's fields or the signature's leaves change.
constexpr int kMemoVersion = 1;

// Hex of what LLVM's getHostCPUName/getHostCPUFeatures read, plus the LLVM
// version; empty where there is no cpuid.
std::string cpuid_signature() {
#if defined(__x86_64__)
  Hasher h;
  h.field("kiln-host-cpu-v" + std::to_string(kMemoVersion));
  h.field(KILN_LLVM_VERSION);
  auto leaf = [&](unsigned id, unsigned sub, unsigned mask_ebx) {
    unsigned a = 0, b = 0, c = 0, d = 0;
    __cpuid_count(id, sub, a, b, c, d);
    h.field(std::to_string(id) + "." + std::to_string(sub) + ":" + std::to_string(a) + "," +
            std::to_string(b & mask_ebx) + "," + std::to_string(c) + "," + std::to_string(d));
  };
  unsigned max = 0, b = 0, c = 0, d = 0;
  __cpuid(0, max, b, c, d);
  leaf(0, 0, ~0u);
  // Leaf 1's EBX holds the APIC id and the brand index of the core the
  // thread happens to run on: only its low byte (brand) is kept.
  leaf(1, 0, 0xffu);
  for (unsigned id : {7u, 0xdu, 0x14u, 0x19u, 0x24u}) {
    if (id > max) continue;
    leaf(id, 0, ~0u);
    leaf(id, 1, ~0u);
  }
  unsigned ext = 0;
  __cpuid(0x80000000u, ext, b, c, d);
  for (unsigned id = 0x80000000u; id <= ext && id <= 0x80000008u; ++id) leaf(id, 0, ~0u);
  // The state the OS enables (AVX, AVX-512 registers): LLVM drops
  // features whose registers the OS does not save.
  unsigned a1 = 0, b1 = 0, c1 = 0, d1 = 0;
  __cpuid(1, a1, b1, c1, d1);
  if (c1 & (1u << 27)) {
    unsigned lo = 0, hi = 0;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    h.field("xcr0:" + std::to_string(lo) + "," + std::to_string(hi));
  }
  return h.finish().hex();
#else
  return {};
#endif
}

// KILN_CACHE_DISABLE: nothing read or written (LLVM asked each process).
std::filesystem::path memo_path(const std::string& signature) {
  const Options& o = Options::global();
  const std::filesystem::path dir = o.cache_dir;
  if (dir.empty() || signature.empty() || o.cache_disabled) return {};
  return dir / "host-cpu" / (signature + ".json");
}

bool is_hex32(const std::string& s) {
  return s.size() == 32 && s.find_first_not_of("0123456789abcdef") == std::string::npos;
}

std::optional<HostCpu> read_memo(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  auto j = nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || j.value("version", 0) != kMemoVersion ||
      j.value("llvm", std::string()) != KILN_LLVM_VERSION) {
    return std::nullopt;
  }
  HostCpu host{j.value("name", std::string()), j.value("triple", std::string()),
               j.value("features_hash", std::string())};
  if (host.name.empty() || host.triple.empty() || !is_hex32(host.features_hash)) {
    KILN_LOG(kDebug) << "host CPU memo " << path.string() << " is damaged: asking LLVM again";
    return std::nullopt;
  }
  return host;
}

// Written whole under a temporary name and renamed: a reader sees the old
// file, none, or this one.
void write_memo(const std::filesystem::path& path, const HostCpu& host) {
  std::error_code ec;
  std::filesystem::create_directories(path.parent_path(), ec);
  if (ec) return;
  const nlohmann::json j = {{"version", kMemoVersion},
                            {"llvm", KILN_LLVM_VERSION},
                            {"name", host.name},
                            {"triple", host.triple},
                            {"features_hash", host.features_hash}};
  const std::string tmp = path.string() + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << j.dump() << "\n";
    if (!out.flush()) {
      std::filesystem::remove(tmp, ec);
      return;
    }
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) std::filesystem::remove(tmp, ec);
}

}  // namespace

namespace {
std::atomic<const CpuToolchain*> g_provided{nullptr};
}  // namespace

void provide_toolchain(const CpuToolchain* toolchain) {
  g_provided.store(toolchain);
}

const CpuToolchain* provided_toolchain() {
  return g_provided.load();
}

namespace {

// LLVM's answer, written when the process ends, and only into a cache
// directory that exists by then: a run that stored nothing (bad input
// refused before anything was tuned) leaves no directory behind, while a
// run that tuned has made it, and the next process finds the memo.
struct PendingMemo {
  std::filesystem::path path;
  std::optional<HostCpu> host;
  ~PendingMemo() {
    std::error_code ec;
    if (host && std::filesystem::is_directory(path.parent_path().parent_path(), ec)) {
      write_memo(path, *host);
    }
  }
};

}  // namespace

Result<HostCpu> host_cpu(ToolchainSource source) {
  static std::mutex mutex;
  static std::optional<HostCpu> known;
  static PendingMemo pending;
  std::lock_guard lock(mutex);
  if (known) return *known;
  const std::filesystem::path path = memo_path(cpuid_signature());
  if (!path.empty()) known = read_memo(path);
  if (known) return *known;
  auto toolchain = source();
  if (!toolchain) return toolchain.error();
  known = (*toolchain)->host_cpu();
  if (!path.empty() && !Options::global().cache_read_only) {
    pending.path = path;  // fields, not a temporary: its destructor would write now
    pending.host = known;
  }
  return *known;
}

std::vector<std::string> cpu_flag_options() {
  std::vector<std::string> out;
  std::istringstream flags(Options::global().cpu_flags);
  for (std::string flag; flags >> flag;) out.push_back(flag);
  return out;
}

std::vector<std::string> clang_code_options(const HostCpu& host,
                                            const std::vector<std::string>& extra) {
  // What the compiler adds beyond unit.options and arch: the optimisation
  // level and language, the host triple and CPU features (-march=native
  // means different code on different hosts), and KILN_CPU_FLAGS.
  std::vector<std::string> out = {"-O3",
                                  "-std=c++20",
                                  "-fPIC",
                                  "--target=" + host.triple,
                                  "host-cpu=" + host.name,
                                  "host-features=" + host.features_hash};
  out.insert(out.end(), extra.begin(), extra.end());
  return out;
}

}  // namespace kiln::cpu
