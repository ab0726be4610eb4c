#include "cache_flush.hpp"

#include <cstdint>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <immintrin.h>
#define KILN_CACHE_FLUSH_X86 1
#else
#define KILN_CACHE_FLUSH_X86 0
#endif

namespace kiln::cpu {

namespace {

enum class FlushOp { kNone, kClflush, kClflushopt };

struct FlushCaps {
  FlushOp op = FlushOp::kNone;
  std::uintptr_t line = 64;  // the stride: never more than a real line
};

// NOTES: CPUID, not the compiler's target flags: the build may run on a
// CPU older or newer than the one it was compiled on.
FlushCaps detect_flush_caps() {
  FlushCaps caps;
#if KILN_CACHE_FLUSH_X86
  unsigned a = 0, b = 0, c = 0, d = 0;
  // The bits by number: GCC's and Clang's <cpuid.h> do not name the same ones.
  constexpr unsigned kLeaf1EdxClflush = 1u << 19, kLeaf7EbxClflushopt = 1u << 23;
  if (!__get_cpuid(1, &a, &b, &c, &d) || !(d & kLeaf1EdxClflush)) return caps;
  caps.op = FlushOp::kClflush;
  // CPUID.1:EBX[15:8] is the flush line size in 8-byte units. A smaller
  // stride than the real line only flushes a line twice; a larger one would
  // skip lines, hence the cap at 64 (and a power of two, for the rounding).
  const std::uintptr_t line = ((b >> 8) & 0xffu) * 8u;
  if (line >= 8 && line <= 64 && (line & (line - 1)) == 0) caps.line = line;
  if (__get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & kLeaf7EbxClflushopt)) {
    caps.op = FlushOp::kClflushopt;
  }
#endif
  return caps;
}

const FlushCaps& flush_caps() {
  static const FlushCaps caps = detect_flush_caps();
  return caps;
}

using FlushLine = void (*)(std::uintptr_t address);

// Flushes the line of each span's first byte and the first byte of every
// later line it covers: each address named lies inside its span, so nothing
// outside is named (and a line never crosses a page, so it is mapped).
void flush_spans(std::span<const DeviceSpan> spans, std::uintptr_t line, FlushLine flush) {
  for (const DeviceSpan& s : spans) {
    if (!s.data || s.bytes == 0) continue;
    const auto first = reinterpret_cast<std::uintptr_t>(s.data);
    const std::uintptr_t last = first + (s.bytes - 1);
    if (last < first) continue;  // wraps the address space: not a real buffer
    flush(first);
    for (std::uintptr_t at = (first & ~(line - 1)) + line; at <= last && at > first; at += line) {
      flush(at);
    }
  }
}

#if KILN_CACHE_FLUSH_X86
// The target attribute lets this one function use CLFLUSHOPT whatever the
// build's -march; it is only called when CPUID says the CPU has it.
__attribute__((target("clflushopt"))) void clflushopt_line(std::uintptr_t address) {
  _mm_clflushopt(reinterpret_cast<void*>(address));
}

void clflush_line(std::uintptr_t address) {
  _mm_clflush(reinterpret_cast<const void*>(address));
}
#endif

}  // namespace

std::string_view cache_flush_instruction() {
  switch (flush_caps().op) {
    case FlushOp::kClflushopt:
      return "clflushopt";
    case FlushOp::kClflush:
      return "clflush";
    case FlushOp::kNone:
      break;
  }
  return {};
}

void flush_lines(std::span<const DeviceSpan> spans) {
#if KILN_CACHE_FLUSH_X86
  const FlushCaps& caps = flush_caps();
  if (caps.op == FlushOp::kNone) return;
  flush_spans(spans, caps.line, caps.op == FlushOp::kClflushopt ? clflushopt_line : clflush_line);
  // CLFLUSHOPT is weakly ordered and CLFLUSH is not ordered with later
  // loads: the fence waits until every line is out before the timed launch.
  _mm_mfence();
#else
  (void)spans;
#endif
}

}  // namespace kiln::cpu
