#include "memory_bandwidth.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <functional>
#include <nlohmann/json.hpp>
#include <thread>

#include "kiln/core/error.hpp"
#include "sample_stats.hpp"

namespace kiln::tool {

namespace {

// Runs body(begin, end) on `threads` threads over [0, n), each thread its
// own contiguous part (the same part every pass, so each thread's pages
// stay where it first touched them).
double run_split(std::size_t n, int threads,
                 const std::function<void(std::size_t, std::size_t)>& body) {
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> crew;
  const std::size_t per = (n + static_cast<std::size_t>(threads) - 1) / threads;
  for (int t = 0; t < threads; ++t) {
    const std::size_t lo = std::min(n, per * static_cast<std::size_t>(t));
    const std::size_t hi = std::min(n, lo + per);
    crew.emplace_back([&body, lo, hi] { body(lo, hi); });
  }
  for (auto& th : crew) th.join();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The patterns' loops, each built for the widest vector ISA the machine
// has (picked when the program loads): the baseline is the best the
// machine can do, not what the tool's portable flags give.
// Not under a sanitizer: the clones are chosen by an ifunc resolver, which
// the loader runs before the sanitizer's runtime is ready (TSan: every run
// of the program, `kiln --help` included, died in it); those builds check
// correctness, never bandwidth.
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define KILN_BANDWIDTH_CLONES
#else
#define KILN_BANDWIDTH_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#endif

// Integer sums: they vectorise without reassociating float additions.
KILN_BANDWIDTH_CLONES std::uint32_t read_words(const float* a, std::size_t lo, std::size_t hi) {
  std::uint32_t sum = 0;
  for (std::size_t i = lo; i < hi; ++i) {
    std::uint32_t w;
    std::memcpy(&w, a + i, sizeof w);
    sum += w;
  }
  return sum;
}

KILN_BANDWIDTH_CLONES void write_floats(float* a, std::size_t lo, std::size_t hi) {
  for (std::size_t i = lo; i < hi; ++i) a[i] = 1.0f;
}

KILN_BANDWIDTH_CLONES void copy_floats(const float* a, float* b, std::size_t lo, std::size_t hi) {
  for (std::size_t i = lo; i < hi; ++i) b[i] = a[i];
}

KILN_BANDWIDTH_CLONES void update_floats(float* a, std::size_t lo, std::size_t hi) {
  for (std::size_t i = lo; i < hi; ++i) a[i] = a[i] * 0.5f + 1.0f;
}

KILN_BANDWIDTH_CLONES void triad_floats(const float* a, const float* b, float* c, std::size_t lo,
                                        std::size_t hi) {
  for (std::size_t i = lo; i < hi; ++i) c[i] = a[i] + 0.5f * b[i];
}

// Keeps the read pattern's sum alive: a sum nobody reads is not computed.
std::atomic<std::uint32_t> read_sink{0};

}  // namespace

BandwidthProbes::BandwidthProbes(std::size_t floats, int threads)
    : floats_(floats), threads_(threads < 1 ? 1 : threads) {
  a_.resize(floats_);
  b_.resize(floats_);
  c_.resize(floats_);
  // Every page touched by the thread that will use it, before any timing.
  run_split(floats_, threads_, [this](std::size_t lo, std::size_t hi) {
    for (std::size_t i = lo; i < hi; ++i) a_[i] = b_[i] = c_[i] = static_cast<float>(i % 7);
  });
}

const std::vector<std::string>& BandwidthProbes::names() {
  static const std::vector<std::string> n = {"read", "write", "copy", "memcpy", "update", "triad"};
  return n;
}

double BandwidthProbes::run_seconds(const std::string& name, double& bytes) {
  float* a = a_.data();
  float* b = b_.data();
  float* c = c_.data();
  const double array = 4.0 * static_cast<double>(floats_);
  std::function<void(std::size_t, std::size_t)> body;
  if (name == "read") {
    bytes = array;
    body = [a](std::size_t lo, std::size_t hi) { read_sink += read_words(a, lo, hi); };
  } else if (name == "write") {
    bytes = array;
    body = [a](std::size_t lo, std::size_t hi) { write_floats(a, lo, hi); };
  } else if (name == "copy") {
    bytes = 2 * array;
    body = [a, b](std::size_t lo, std::size_t hi) { copy_floats(a, b, lo, hi); };
  } else if (name == "memcpy") {
    // The C library's copy: for large sizes it streams its stores past the
    // caches, which the plain loops do not.
    bytes = 2 * array;
    body = [a, b](std::size_t lo, std::size_t hi) {
      std::memcpy(b + lo, a + lo, (hi - lo) * sizeof(float));
    };
  } else if (name == "update") {
    bytes = 2 * array;
    body = [a](std::size_t lo, std::size_t hi) { update_floats(a, lo, hi); };
  } else if (name == "triad") {
    bytes = 3 * array;
    body = [a, b, c](std::size_t lo, std::size_t hi) { triad_floats(a, b, c, lo, hi); };
  } else {
    throw Error(ErrorCode::kInvalidArgument, "no bandwidth pattern named '" + name + "'");
  }
  return run_split(floats_, threads_, body);
}

nlohmann::json bandwidth_json(const std::vector<std::string>& names,
                              const std::vector<std::vector<double>>& gbps_passes, int threads,
                              std::size_t array_bytes) {
  nlohmann::json out = {
      {"threads", threads}, {"array_bytes", array_bytes}, {"probes", nlohmann::json::object()}};
  double best = 0;
  for (std::size_t i = 0; i < names.size(); ++i) {
    const double gbps = median(gbps_passes[i]);
    out["probes"][names[i]] = gbps;
    if (gbps > best) {
      best = gbps;
      out["best"] = names[i];
    }
  }
  out["gbps"] = best;
  return out;
}

}  // namespace kiln::tool
