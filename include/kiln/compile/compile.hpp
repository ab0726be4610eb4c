// The compile stage's value types and the one interface every backend
// implements (NVRTC in backends/cuda, Clang + LLVM ORC in backends/cpu):
//
//   Specialization  one template instantiation (kernel, config, entry expression)
//   CompileUnit     one program: source + G specializations + options + target
//   Compiler        compiles one CompileUnit -> CompiledProgram or an ErrorInfo
//   Artifact        one entry of a compiled program: binary + symbol + key
//   UnitResult      per specialization, its Artifact or its own error
//
// Grouping, the compile pool, failure isolation (split and retry) and the
// artifact keys live in lib/compile/ on top of this interface, so a backend
// only has to compile one program well.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "kiln/core/config.hpp"
#include "kiln/core/error.hpp"
#include "kiln/core/hash.hpp"

namespace kiln {

// What a compiler produces. Never guessed from content: it travels with the
// bytes everywhere (Artifact, cache metadata).
enum class BinaryFormat {
  kCubin,            // CUDA ELF for one real arch (sm_80, sm_90a)
  kPtx,              // CUDA PTX text for a virtual arch (compute_90); JIT-ed by the driver
  kCpuObject,        // a relocatable host object file (ELF .o) that LLJIT links
  kCpuSharedObject,  // a host shared object (ELF .so) that dlopen loads: no LLVM to run it
};

// "cubin", "ptx", "cpu_object", "cpu_shared_object"
const char* binary_format_name(BinaryFormat format);
// Inverse of binary_format_name; nullopt for any other text.
std::optional<BinaryFormat> parse_binary_format(std::string_view text);

// One instantiation of a kernel template for one config: what
// KernelTemplate::specialize gives (include/kiln/compile/kernel.hpp).
struct Specialization {
  std::string kernel;  // template name, "gemm_f16"
  Config config;
  // A C++ expression naming the function to instantiate and export, with the
  // config's values substituted: "kiln::gemm<half,64,128,32,2,2,3>". NVRTC
  // takes it as a name expression; the CPU backend instantiates it and
  // exports it. Unique within a CompileUnit.
  std::string entry;
  // Preprocessor definitions this specialization needs (NAME -> value).
  // Specializations with different defines or options never share a program.
  std::map<std::string, std::string> defines;
  std::vector<std::string> options;  // further compiler options of this specialization

  nlohmann::json to_json() const;
  static Specialization from_json(const nlohmann::json& json);
  bool operator==(const Specialization&) const = default;
};

// A header handed to the compiler from memory, found by `#include "name"`.
struct Header {
  std::string name;  // as written in the #include, "kiln/gemm_common.cuh"
  std::string content;
  bool operator==(const Header&) const = default;
};

// One program for one compiler invocation: G specializations of one source
// (G = specializations.size(), at least 1). Build units with
// kiln::group() (kiln/compile/compile_engine.hpp), which checks the invariants.
struct CompileUnit {
  std::string kernel;  // for logs and errors
  std::string source;  // the template's source, shared by every specialization
  std::vector<Header> headers;
  std::vector<std::string> include_dirs;
  // Every option of the program except target, output and include dirs: the
  // specializations' options, then "-DNAME=VALUE" for each define (identical
  // across the unit; group() ensures it).
  std::vector<std::string> options;
  // Target: "sm_80", "sm_90a", "compute_90" (CUDA); "host" or an LLVM CPU
  // name (CPU backend).
  std::string arch;
  BinaryFormat format = BinaryFormat::kCubin;
  std::vector<Specialization> specializations;

  // "gemm_f16 x8 sm_90a cubin": for logs.
  std::string describe() const;

  // Every field (worker processes receive units this way). from_json throws
  // kiln::Error (kInvalidArgument) naming what is malformed.
  nlohmann::json to_json() const;
  static CompileUnit from_json(const nlohmann::json& json);
};

// Cooperative cancellation shared between the caller and the compile that
// watches it: copies share one state, so cancelling any copy cancels all.
// A deadline turns into cancellation when it passes. Thread-safe.
class CancelToken {
 public:
  using Clock = std::chrono::steady_clock;

  CancelToken();
  // A token that is cancelled when `parent` is, or on its own.
  static CancelToken child_of(const CancelToken& parent);

  void cancel() const;
  void set_deadline(Clock::time_point deadline) const;
  // True after cancel() (on this token or its parent) or past the deadline.
  bool cancelled() const;

 private:
  struct State {
    std::atomic<bool> flag{false};
    std::atomic<Clock::rep> deadline{Clock::time_point::max().time_since_epoch().count()};
    std::shared_ptr<const State> parent;
  };
  std::shared_ptr<State> state_;
};

// A whole program compiled by a backend. `lowered_names[i]` is the symbol of
// `unit.specializations[i].entry` in `binary`.
struct CompiledProgram {
  BinaryFormat format = BinaryFormat::kCubin;
  std::string arch;
  // Shared: the G entries of a grouped program carry the same bytes.
  std::shared_ptr<const std::string> binary;
  std::vector<std::string> lowered_names;
  std::string log;                   // kept even when empty of errors (warnings, notes)
  std::vector<std::string> options;  // exactly what the compiler was given
  double seconds = 0;                // wall time of the compile call
};

// The compiled form of one specialization: what the cache stores and the
// device loads. The entries of one grouped program share `binary`.
struct Artifact {
  // Bumped on any change to the fields or their JSON: the cache refuses
  // metadata of another version.
  static constexpr int kFormatVersion = 1;

  // artifact_key(toolchain, source with headers, options + compiler settings,
  // entry, arch, env): independent of which siblings shared the program, so
  // one specialization compiled alone or in a group has the same key.
  Hash128 key;
  std::string kernel;
  Config config;
  std::string entry;         // the entry expression
  std::string lowered_name;  // the symbol to look up in `binary`
  BinaryFormat format = BinaryFormat::kCubin;
  std::string arch;
  std::shared_ptr<const std::string> binary;
  std::string compiler;              // backend and version, "nvrtc 13.0"
  std::vector<std::string> options;  // what the compiler was given for the program
  std::string log;                   // the program's compile log
  double compile_seconds = 0;        // wall time of the program that produced it
  std::size_t group_size = 1;        // entries in that program

  // Everything but the binary (which the cache stores as raw bytes), plus
  // the binary's size and XXH3-128 so a reader can check the bytes it pairs
  // with it.
  nlohmann::json to_json() const;
  // Throws kiln::Error (kCorrupt) naming the field when the metadata is
  // malformed, of another format version, or does not match `binary`.
  static Artifact from_json(const nlohmann::json& json, std::string binary);
};

// The outcome of one CompileUnit after failure isolation: one entry per
// specialization, in the unit's order. A failed entry's ErrorInfo has code
// kCompileFailed (or kCancelled) and details "log", "options", "config",
// "kernel", "entry", "arch" and "isolated_by" ("log" when the log named it,
// "split" when retrying smaller programs found it).
struct UnitResult {
  CompileUnit unit;
  std::vector<Result<Artifact>> entries;
  double seconds = 0;        // wall time from start to the last retry
  std::size_t programs = 0;  // compiler invocations it took (1 when nothing failed)

  std::size_t ok_count() const;
};

// A backend compiler. Implementations must be safe to call from several
// threads at once (the compile pool does); any process-wide state (NVRTC's
// PCH heap, LLVM's target registry) is theirs to guard.
class Compiler {
 public:
  virtual ~Compiler() = default;

  // "nvrtc", "clang-orc": stable, goes into artifacts and logs.
  virtual std::string name() const = 0;
  // The compiler's version, "13.0", "19.1.7".
  virtual std::string version() const = 0;
  // Options this compiler adds on its own that change generated code (beyond
  // unit.options, arch and format), e.g. "-default-device". They enter the
  // artifact key. PCH or timing switches that do not change code stay out.
  virtual std::vector<std::string> code_options() const = 0;

  // Compiles one program. The whole program succeeds or fails: on failure
  // an ErrorInfo with code kCompileFailed whose details carry "log" and
  // "options" (kCancelled when `cancel` fired, kUnavailable when the
  // compiler cannot run here). Must return promptly after `cancel` fires
  // where the backend allows (NVRTC's flow callback).
  virtual Result<CompiledProgram> compile(const CompileUnit& unit, const CancelToken& cancel) = 0;

  // Indices into unit.specializations that `log` (from a failed compile of
  // `unit`) blames, e.g. from NVRTC's "detected during instantiation of ...
  // [with BM=64, ...]". Empty when the log names none; the engine then splits
  // the program and retries. Optional.
  virtual std::vector<std::size_t> blame(const CompileUnit& unit, const std::string& log) const {
    (void)unit;
    (void)log;
    return {};
  }
};

}  // namespace kiln
