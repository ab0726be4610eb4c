// Grouping specializations into programs, artifact keys, and failure
// isolation: the backend-neutral part of compiling. The pool that runs it on
// several workers is kiln/compile/compile_pool.hpp.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "kiln/compile/compile.hpp"
#include "kiln/compile/kernel.hpp"
#include "kiln/core/fingerprint.hpp"
#include "kiln/core/options.hpp"

namespace kiln {

// Specializations per program when nobody says otherwise. Measured on the
// shipped GEMM (docs/benchmarks.md, "Compile engine"; the sweep:
// docs/lab/pipeline-journal.md, "Compile engine"): with PCH on two cores,
// groups of 4-8 reach the (NVVM + PTX translation) / cores floor; bigger
// groups leave a core idle at the end of a run and make a failure's retries
// costlier.
inline constexpr std::size_t kDefaultGroupSize = 8;

// `requested` when non-zero, else Options::group_size (KILN_GROUP_SIZE) when
// non-zero, else kDefaultGroupSize.
std::size_t resolve_group_size(std::size_t requested, const Options& options = Options::global());

struct GroupOptions {
  std::size_t group_size = 0;  // 0: resolve_group_size(0)
  std::string arch;            // "sm_90a", "compute_90", "host"
  BinaryFormat format = BinaryFormat::kCubin;
  // Workers that will compile the units (0 or 1: no effect). The unit count
  // of each class is rounded up to a multiple of it, so no worker is left
  // compiling a last unit alone: 23 configs, G=8, 2 workers give 6+6+6+5,
  // not 8+8+7.
  int workers = 0;
};

// Packs specializations of `kernel` into CompileUnits of at most group_size
// entries. Only specializations with equal defines and options share a
// unit; within such a class, units are balanced (10 with G=8 give 5+5, not
// 8+2; see GroupOptions::workers) and keep the input order. Throws kiln::Error when a
// specialization belongs to another template or the arch is empty.
std::vector<CompileUnit> group(const KernelTemplate& kernel,
                               const std::vector<Specialization>& specializations,
                               const GroupOptions& options);

// What, besides the unit, decides an artifact's identity.
struct CompileContext {
  ToolchainFingerprint toolchain;  // kiln::current_toolchain(kind) in an application
  EnvSnapshot env;                 // CacheEnvRegistry::global().snapshot()
};

// The artifact key of `unit.specializations[index]`: toolchain, the source
// with every in-memory header folded in, unit options, include dirs, the
// compiler's name and code_options(), the format, entry, arch and env. The
// siblings in the unit do not enter it, so grouped and separate compiles of
// one specialization share a key.
Hash128 specialization_key(const CompileContext& context, const Compiler& compiler,
                           const CompileUnit& unit, std::size_t index);

// The artifacts of a successful program, one per specialization.
std::vector<Artifact> make_artifacts(const CompileContext& context, const Compiler& compiler,
                                     const CompileUnit& unit, const CompiledProgram& program);

// Compiles `unit` and, when the program fails to compile, isolates the
// failure: the specializations the compiler's log blames are compiled alone
// (each gets its own log), the rest again as one program; when the log names
// none, the program is split in halves, recursively. Every healthy
// specialization ends with its artifact and every broken one with its own
// error (code kCompileFailed, details log/options/config/kernel/entry/arch/
// isolated_by). Errors that splitting cannot fix (kUnavailable,
// kInvalidArgument) and cancellation are given to every entry at once.
UnitResult compile_isolated(Compiler& compiler, const CompileUnit& unit, const CancelToken& cancel,
                            const CompileContext& context);

}  // namespace kiln
