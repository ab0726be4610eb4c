// kiln_bench_cpu_compile [REPS]: what one CPU specialization costs to make
// ready, measured side by side in one run on the shipped tiled GEMM.
//   (1) in process: Clang as a library + -O3 codegen to an object, G=1,
//       without and with the precompiled common headers (PCH)
//   (2) a compiler subprocess (the same clang, same flags, files on disk)
//   for the shipped template and for the same kernel including std headers
//   (3) grouped: 8 specializations in one program, per specialization
//   (4) two threads compiling at once, throughput against one thread
//   (5) a cached object: linked by LLJIT in a fresh device, no compile
//   (6) ready to call: in process, compile + LLJIT link; as a subprocess,
//       what a tool without an in-process JIT does (Kernel Tuner's C++
//       backend, for one): compile and link a shared object, then dlopen
//       and dlsym it
// Medians over REPS (default 5) rounds of 8 distinct configs.
#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "cpu/clang_compiler.hpp"
#include "cpu/clang_prelude.hpp"
#include "kiln/backends/cpu.hpp"

namespace {

using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

std::string read(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

kiln::Specialization spec(int bm, int bn, int bk) {
  kiln::Specialization s;
  s.kernel = "gemm_f32";
  s.config =
      kiln::Config{{"BM", std::int64_t{bm}}, {"BN", std::int64_t{bn}}, {"BK", std::int64_t{bk}}};
  s.entry = "kiln_cpu::gemm_f32_tiled<" + std::to_string(bm) + "," + std::to_string(bn) + "," +
            std::to_string(bk) + ">";
  return s;
}

kiln::CompileUnit unit_of(std::vector<kiln::Specialization> specs, const std::string& source) {
  kiln::CompileUnit u;
  u.kernel = "gemm_f32";
  u.source = source;
  u.arch = "host";
  u.format = kiln::BinaryFormat::kCpuObject;
  u.specializations = std::move(specs);
  return u;
}

// The unit's files written to `dir` and the in-process driver's arguments
// with their real paths, compiling to `output`: an object, or with `shared`
// a shared object (-shared for -c: the driver then runs the linker too).
std::vector<std::string> unit_on_disk(const kiln::cpu::ClangCompiler& compiler,
                                      const kiln::CompileUnit& unit, const fs::path& dir,
                                      const fs::path& output, bool shared) {
  fs::create_directories(dir / "include" / "kiln");
  std::ofstream(dir / "include" / kiln::cpu::kPreludeHeader) << kiln::cpu::prelude_source();
  std::ofstream(dir / "gemm_f32.cpp") << unit.source;
  std::ofstream(dir / "unit.cpp") << kiln::cpu::unit_main_source(unit, "gemm_f32.cpp");
  std::vector<std::string> args = compiler.driver_args(unit);
  for (auto& a : args) {
    if (a.rfind("-I/kiln-unit", 0) == 0) a = "-I" + (dir / "include").string();
    if (a == "/kiln-unit/unit.cpp") a = (dir / "unit.cpp").string();
    if (a == "/kiln-unit/unit.o") a = output.string();
    if (a == "-c" && shared) a = "-shared";
  }
  return args;
}

// fork + exec + wait: the child's wait status.
int run_child(std::vector<std::string> args) {
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = ::fork();
  if (pid == 0) {
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return status;
}

bool succeeded(int status) {
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

// (2) The same compile to an object as a child process.
double subprocess_ms(const kiln::cpu::ClangCompiler& compiler, const kiln::CompileUnit& unit,
                     const fs::path& dir) {
  std::vector<std::string> args = unit_on_disk(compiler, unit, dir, dir / "unit.o", false);
  auto start = Clock::now();
  const int status = run_child(std::move(args));
  const double ms = ms_since(start);
  if (!succeeded(status)) {
    std::fprintf(stderr, "subprocess compile failed (status %d)\n", status);
    std::exit(1);
  }
  return ms;
}

// (6) As a subprocess: compile and link a shared object, dlopen, dlsym.
double subprocess_so_ms(const kiln::cpu::ClangCompiler& compiler, const kiln::CompileUnit& unit,
                        const fs::path& dir) {
  static int serial = 0;  // a new name each time: dlopen would reuse a loaded path
  const fs::path so = dir / ("unit" + std::to_string(serial++) + ".so");
  std::vector<std::string> args = unit_on_disk(compiler, unit, dir, so, true);
  auto start = Clock::now();
  const int status = run_child(std::move(args));
  void* handle = succeeded(status) ? ::dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL) : nullptr;
  void* entry = handle ? ::dlsym(handle, kiln::cpu::entry_symbol(0).c_str()) : nullptr;
  const double ms = ms_since(start);
  if (!entry) {
    std::fprintf(stderr, "shared-object compile or load failed (status %d): %s\n", status,
                 handle ? ::dlerror() : "no library");
    std::exit(1);
  }
  ::dlclose(handle);
  fs::remove(so);
  return ms;
}

}  // namespace

struct Row {
  std::vector<double> plain, pch, subprocess, ready, ready_sub;
};

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::max(1, std::atoi(argv[1])) : 5;
  const std::string shipped = read(fs::path(KILN_SOURCE_DIR) / "templates/cpu/gemm_f32_tiled.cpp");
  // The same kernel as a template that uses the standard library would
  // start: the front end then parses these headers on every compile.
  const std::string with_std =
      "#include <algorithm>\n#include <cmath>\n#include <cstdint>\n#include <limits>\n" + shipped;
  kiln::cpu::ClangSettings plain_settings = kiln::cpu::ClangSettings::from_options();
  plain_settings.pch = false;
  kiln::cpu::ClangSettings pch_settings = plain_settings;
  pch_settings.pch = true;
  kiln::cpu::ClangCompiler plain(plain_settings), with_pch(pch_settings);
  kiln::CancelToken cancel;
  const int tiles[8][3] = {{8, 8, 8},    {8, 16, 16},  {16, 16, 16}, {16, 32, 32},
                           {32, 32, 32}, {32, 64, 32}, {64, 64, 64}, {16, 64, 128}};
  auto compile = [&](kiln::cpu::ClangCompiler& c, const kiln::CompileUnit& u) {
    auto p = c.compile(u, cancel);
    if (!p) {
      std::fprintf(stderr, "%s\n", p.error().describe().c_str());
      std::exit(1);
    }
    return std::move(*p);
  };
  // First-use costs out of the medians: target registration, the driver,
  // and building the PCH (timed: a once-per-process cost).
  (void)compile(plain, unit_of({spec(4, 4, 4)}, shipped));
  auto pch_start = Clock::now();
  (void)compile(plain, unit_of({spec(4, 4, 4)}, with_std));
  (void)compile(with_pch, unit_of({spec(4, 4, 4)}, with_std));
  const double pch_build_ms = ms_since(pch_start);

  // (6) one LLJIT for the whole run: creating it is a once-per-process cost.
  auto jit = kiln::cpu::open_device(1).value();
  Row rows[2];
  std::vector<double> grouped, two_threads, one_thread, load;
  const fs::path dir = fs::temp_directory_path() / ("kiln_bench_" + std::to_string(::getpid()));
  for (int r = 0; r < reps; ++r) {
    std::vector<kiln::Specialization> all;
    for (const auto& t : tiles) all.push_back(spec(t[0], t[1], t[2]));
    // (1) and (2), interleaved so drift hits every column alike.
    for (int which = 0; which < 2; ++which) {
      const std::string& source = which == 0 ? shipped : with_std;
      for (const auto& s : all) {
        auto u = unit_of({s}, source);
        auto start = Clock::now();
        (void)compile(plain, u);
        rows[which].plain.push_back(ms_since(start));
        start = Clock::now();
        (void)compile(with_pch, u);
        rows[which].pch.push_back(ms_since(start));
        rows[which].subprocess.push_back(subprocess_ms(plain, u, dir));
        // (6) Kiln's path (the PCH where it applies), compile to callable.
        start = Clock::now();
        auto program = compile(with_pch, u);
        kiln::Artifact a;
        a.entry = s.entry;
        a.lowered_name = program.lowered_names[0];
        a.format = kiln::BinaryFormat::kCpuObject;
        a.binary = program.binary;
        auto loaded = jit->load(a);
        rows[which].ready.push_back(ms_since(start));
        if (!loaded) return 1;
        rows[which].ready_sub.push_back(subprocess_so_ms(plain, u, dir));
      }
    }
    // (3)
    auto start = Clock::now();
    auto program = compile(plain, unit_of(all, shipped));
    grouped.push_back(ms_since(start) / 8);
    // (4): the 8 singles on one thread, then split over two.
    start = Clock::now();
    for (const auto& s : all) (void)compile(plain, unit_of({s}, shipped));
    one_thread.push_back(ms_since(start));
    start = Clock::now();
    std::thread other([&] {
      for (std::size_t i = 0; i < all.size(); i += 2)
        (void)compile(plain, unit_of({all[i]}, shipped));
    });
    for (std::size_t i = 1; i < all.size(); i += 2)
      (void)compile(plain, unit_of({all[i]}, shipped));
    other.join();
    two_threads.push_back(ms_since(start));
    // (5): a fresh device (fresh LLJIT) links the cached bytes; creating the
    // JIT is a once-per-process cost and stays out.
    for (std::size_t i = 0; i < 8; ++i) {
      auto device = kiln::cpu::open_device(1).value();
      kiln::Artifact a;
      a.entry = all[i].entry;
      a.lowered_name = program.lowered_names[i];
      a.format = kiln::BinaryFormat::kCpuObject;
      a.binary = std::make_shared<const std::string>(*program.binary);
      start = Clock::now();
      auto kernel = device->load(a);
      load.push_back(ms_since(start));
      if (!kernel) return 1;
    }
  }
  fs::remove_all(dir);

  std::printf("CPU compile per specialization, gemm_f32, %d rounds x 8 configs, LLVM %s, %s\n",
              reps, plain.version().c_str(), kiln::cpu::host_arch().c_str());
  std::printf("%-34s %10s %10s %12s %10s %10s\n", "template", "in-proc", "in-proc+PCH",
              "subprocess", "in/sub", "PCH/sub");
  const char* names[2] = {"gemm_f32 (no std headers)", "gemm_f32 + <algorithm> <cmath>..."};
  for (int which = 0; which < 2; ++which) {
    const double p = median(rows[which].plain), h = median(rows[which].pch),
                 sub = median(rows[which].subprocess);
    std::printf("%-34s %8.2f ms %8.2f ms %10.2f ms %10.2f %10.2f\n", names[which], p, h, sub,
                p / sub, h / sub);
  }
  std::printf(
      "\nready to call: compile + load, in process (LLJIT, PCH where it applies) "
      "against a subprocess (shared object + dlopen)\n");
  std::printf("%-34s %10s %12s %10s\n", "template", "in-proc", "subprocess", "in/sub");
  for (int which = 0; which < 2; ++which) {
    const double in = median(rows[which].ready), sub = median(rows[which].ready_sub);
    std::printf("%-34s %8.2f ms %10.2f ms %10.2f\n", names[which], in, sub, in / sub);
  }
  const double inproc = median(rows[0].plain), cached = median(load);
  std::printf("first PCH compile, building the PCH (once per process and option set): %.0f ms\n",
              pch_build_ms);
  std::printf("grouped, G=8, per specialization: %.2f ms (grouped/G=1 = %.2f)\n", median(grouped),
              median(grouped) / inproc);
  std::printf("8 compiles, 1 thread / 2 threads: %.1f / %.1f ms, speedup %.2fx\n",
              median(one_thread), median(two_threads), median(one_thread) / median(two_threads));
  std::printf("cached object linked in a fresh LLJIT: %.3f ms; compile/load = %.0fx\n", cached,
              inproc / cached);
  return 0;
}
