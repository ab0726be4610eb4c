// Evicting a kernel's own buffers from every cache level: the CPU's
// cold-cache flush (Device::flush_caches). Costs what the buffers cost, not
// what the machine's last-level cache is reported to be.
#pragma once

#include <span>
#include <string_view>

#include "kiln/device/device.hpp"

namespace kiln::cpu {

// The instruction flush_lines uses on this CPU, found at run time (CPUID):
// "clflushopt", else "clflush"; empty where there is none (not x86), and
// flush_lines then does nothing.
std::string_view cache_flush_instruction();

// Writes back and invalidates every cache line holding a byte of `spans`,
// in the caches of every core, then fences so that no later load is served
// from a cache. Reads and writes no memory: the data stays as it was.
void flush_lines(std::span<const DeviceSpan> spans);

}  // namespace kiln::cpu
