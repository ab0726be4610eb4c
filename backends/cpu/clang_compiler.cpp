#include "clang_compiler.hpp"

#include <clang/Basic/Diagnostic.h>
#include <clang/Basic/DiagnosticOptions.h>
#include <clang/CodeGen/CodeGenAction.h>
#include <clang/Frontend/CompilerInstance.h>
#include <clang/Frontend/CompilerInvocation.h>
#include <clang/Frontend/FrontendActions.h>
#include <clang/Frontend/TextDiagnosticPrinter.h>
#include <clang/Frontend/Utils.h>
#include <llvm/ADT/SmallString.h>
#include <llvm/Config/llvm-config.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/VirtualFileSystem.h>
#include <llvm/Support/raw_ostream.h>

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <fstream>
#include <iterator>
#include <sstream>

#include "clang_prelude.hpp"
#include "kiln/backends/cpu.hpp"
#include "kiln/core/log.hpp"
#include "kiln/core/options.hpp"
#include "llvm_info.hpp"
#include "llvm_lock.hpp"
#include "shared_link.hpp"

#ifndef KILN_CLANG_EXECUTABLE
#error "KILN_CLANG_EXECUTABLE must be defined by the build (backends/CMakeLists.txt)"
#endif
#ifndef KILN_CLANG_RESOURCE_DIR
#error "KILN_CLANG_RESOURCE_DIR must be defined by the build (backends/CMakeLists.txt)"
#endif

namespace kiln::cpu {

namespace {

// Paths inside the in-memory file system; nothing is written to disk.
constexpr const char* kRoot = "/kiln-unit";
constexpr const char* kPchHeader = "kiln/cpu_pch.h";
constexpr const char* kPchFile = "common.pch";

std::string source_file_name(const std::string& kernel) {
  std::string name = kernel.empty() ? "kernel" : kernel;
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') c = '_';
  }
  return name + ".cpp";
}

std::string join(const std::vector<std::string>& parts) {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : " ") + p;
  return out;
}

// "host", "native" and this machine's CPU name all mean: the CPU we run on,
// with exactly its features.
bool is_host_arch(const std::string& arch) {
  return arch.empty() || arch == "host" || arch == "native" || arch == linked_host_cpu().name;
}

// Diagnostics of the driver and of the compile, printed as Clang prints
// them into one text: the log every error carries.
struct DiagnosticLog {
  explicit DiagnosticLog(std::string& text)
      : stream(text),
        options(llvm::makeIntrusiveRefCnt<clang::DiagnosticOptions>()),
        engine(clang::CompilerInstance::createDiagnostics(
            options.get(), new clang::TextDiagnosticPrinter(stream, options.get()),
            /*ShouldOwnClient=*/true)) {}
  llvm::raw_string_ostream stream;
  llvm::IntrusiveRefCntPtr<clang::DiagnosticOptions> options;
  llvm::IntrusiveRefCntPtr<clang::DiagnosticsEngine> engine;
};

// The log with the in-memory root taken off its paths: "broken.cpp:3:5:
// error", as NVRTC names its program "broken.cu(3)". /kiln-unit exists in
// no file system a user can open, and it read as a path to look for.
std::string user_paths(std::string log) {
  const std::string root = std::string(kRoot) + "/";
  for (std::size_t at = log.find(root); at != std::string::npos; at = log.find(root, at))
    log.erase(at, root.size());
  return log;
}

// `search`: the directories the front end looked in for headers, one per
// line, so that a failure remembered for a header it did not find is
// forgotten once the header is there (kiln/cache/failed_configs.hpp).
ErrorInfo compile_error(const CompileUnit& unit, std::string message, const std::string& log,
                        const std::vector<std::string>& args, const std::string& search = "") {
  ErrorInfo e = make_error(ErrorCode::kCompileFailed, std::move(message),
                           {{"log", user_paths(log)},
                            {"options", join(args)},
                            {"kernel", unit.kernel},
                            {"arch", unit.arch}});
  if (!search.empty()) e.details["include_search"] = search;
  return e;
}

// The real directories of an invocation's header search (-I, the system
// and resource directories the driver added), one per line; the in-memory
// root is left out: nothing a user does puts a file there.
std::string header_search_dirs(const clang::CompilerInvocation& inv) {
  std::string out;
  for (const auto& entry : inv.getHeaderSearchOpts().UserEntries) {
    if (entry.Path.rfind(kRoot, 0) == 0) continue;
    out += entry.Path + "\n";
  }
  return out;
}

// The resource directory a wheel carries beside this library (clang/ next
// to libkiln_cpu_backend.so, python/CMakeLists.txt): a wheel runs where the
// build's LLVM is absent, so its own copy of the builtin headers comes
// first; a build tree or a `cmake --install` uses the build's.
std::filesystem::path default_resource_dir() {
  Dl_info info{};
  if (::dladdr(reinterpret_cast<const void*>(&default_resource_dir), &info) && info.dli_fname) {
    const auto bundled = std::filesystem::path(info.dli_fname).parent_path() / "clang";
    std::error_code ec;
    if (std::filesystem::exists(bundled / "include" / "stddef.h", ec)) return bundled;
  }
  return KILN_CLANG_RESOURCE_DIR;
}

}  // namespace

ClangSettings ClangSettings::from_options() {
  ClangSettings s;
  s.clang_path = KILN_CLANG_EXECUTABLE;
  s.resource_dir = default_resource_dir();
  s.pch = Options::global().pch;
  s.extra_options = cpu_flag_options();
  return s;
}

Result<std::filesystem::path> checked_resource_dir(const std::filesystem::path& dir) {
  std::error_code ec;
  if (!std::filesystem::exists(dir / "include" / "stddef.h", ec)) {
    return make_error(
        ErrorCode::kUnavailable,
        "Clang's resource directory " + dir.string() +
            " lacks its builtin headers (include/stddef.h): install libclang-common-" +
            std::to_string(LLVM_VERSION_MAJOR) +
            "-dev (scripts/setup.sh) or reconfigure Kiln against an LLVM that has it",
        {{"resource_dir", dir.string()}});
  }
  return dir;
}

ClangCompiler::ClangCompiler(ClangSettings settings) : settings_(std::move(settings)) {}

// NOTES: the driver stats the disk for GCC installations and system
// include paths on every call; its output depends only on the arguments
// (and the machine, fixed for the process), so it runs once per distinct
// argument list and later compiles rebuild the invocation from cc1 args.
std::optional<std::vector<std::string>> ClangCompiler::cached_cc1_args(
    const std::vector<std::string>& args) const {
  std::lock_guard lock(cc1_mutex_);
  auto it = cc1_cache_.find(args);
  if (it == cc1_cache_.end()) return std::nullopt;
  return it->second;
}

void ClangCompiler::remember_cc1_args(const std::vector<std::string>& args,
                                      std::vector<std::string> cc1) const {
  std::lock_guard lock(cc1_mutex_);
  cc1_cache_.emplace(args, std::move(cc1));
}

std::string ClangCompiler::version() const {
  return LLVM_VERSION_STRING;
}

std::vector<std::string> ClangCompiler::code_options() const {
  // Computed by the light half, so that a process serving from the cache
  // gets the same keys without LLVM (runtime/host_cpu.cpp).
  return clang_code_options(linked_host_cpu(), settings_.extra_options);
}

std::vector<std::string> ClangCompiler::common_args(const CompileUnit& unit,
                                                    const char* language) const {
  std::string root = kRoot;
  std::vector<std::string> args = {
      settings_.clang_path.string(),
      language,
      "-std=c++20",
      "-O3",
      "-fPIC",
      is_host_arch(unit.arch) ? "-march=native" : "-march=" + unit.arch,
      "-resource-dir",
      settings_.resource_dir.string(),
      "-I" + root + "/include"};
  for (const auto& dir : unit.include_dirs) args.push_back("-I" + dir);
  args.insert(args.end(), unit.options.begin(), unit.options.end());
  args.insert(args.end(), settings_.extra_options.begin(), settings_.extra_options.end());
  return args;
}

// NOTES: loading the PCH costs a compile more than it saves when the
// source includes no system header (measured: 137 -> 239 ms for the shipped
// GEMM; 941 -> 256 ms once it includes <algorithm> and <cmath>), so it is
// used only for units that include one.
bool ClangCompiler::uses_pch(const CompileUnit& unit) const {
  if (!settings_.pch) return false;
  if (unit.source.find("#include <") != std::string::npos) return true;
  return std::any_of(unit.headers.begin(), unit.headers.end(), [](const Header& h) {
    return h.content.find("#include <") != std::string::npos;
  });
}

std::vector<std::string> ClangCompiler::driver_args(const CompileUnit& unit) const {
  const std::string root = kRoot;
  std::vector<std::string> args = common_args(unit, "-xc++");
  if (uses_pch(unit)) args.insert(args.end(), {"-include-pch", root + "/" + kPchFile});
  args.insert(args.end(), {"-c", root + "/unit.cpp", "-o", root + "/unit.o"});
  return args;
}

std::string ClangCompiler::pch_header() const {
  std::string text = "#include \"" + std::string(kPreludeHeader) + "\"\n";
  for (const auto& h : settings_.pch_headers) text += "#include <" + h + ">\n";
  return text;
}

Result<std::shared_ptr<clang::CompilerInvocation>> ClangCompiler::invocation(
    const std::vector<std::string>& args, clang::DiagnosticsEngine& diags,
    llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem> files) const {
  std::shared_ptr<clang::CompilerInvocation> out;
  if (auto cc1 = cached_cc1_args(args)) {
    std::vector<const char*> cc1_argv;
    for (const auto& a : *cc1) cc1_argv.push_back(a.c_str());
    out = std::make_shared<clang::CompilerInvocation>();
    if (!clang::CompilerInvocation::CreateFromArgs(*out, cc1_argv, diags, args[0].c_str())) {
      out = nullptr;
    }
  } else {
    std::vector<const char*> argv;
    for (const auto& a : args) argv.push_back(a.c_str());
    std::vector<std::string> cc1_args;
    clang::CreateInvocationOptions options;
    options.Diags = &diags;
    options.VFS = std::move(files);
    options.CC1Args = &cc1_args;
    out = clang::createInvocation(argv, options);
    if (out && !diags.hasErrorOccurred()) remember_cc1_args(args, std::move(cc1_args));
  }
  // The driver reports an option it does not know (KILN_CPU_FLAGS=-ffast-mth)
  // as an error yet still returns an invocation without it: compiling that
  // would store artifacts claiming a flag they never saw.
  if (!out || diags.hasErrorOccurred())
    return make_error(ErrorCode::kCompileFailed, "the Clang driver rejected the options");
  // NOTES: the driver sets DisableFree for a process that exits after one
  // compile; in a long-lived process that leaks about 1.25 MB per compile.
  out->getFrontendOpts().DisableFree = false;
  out->getCodeGenOpts().DisableFree = false;
  return out;
}

bool ClangCompiler::run(std::shared_ptr<clang::CompilerInvocation> invocation,
                        llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem> files,
                        clang::FrontendAction& action, llvm::raw_ostream& log,
                        std::unique_ptr<llvm::raw_pwrite_stream> output) const {
  clang::CompilerInstance instance;
  instance.setInvocation(std::move(invocation));
  instance.createDiagnostics(new clang::TextDiagnosticPrinter(log, &instance.getDiagnosticOpts()),
                             /*ShouldOwnClient=*/true);
  instance.createFileManager(std::move(files));
  // "N errors generated." goes to the log, not to the process's stderr.
  instance.setVerboseOutputStream(log);
  if (output) instance.setOutputStream(std::move(output));
  return instance.ExecuteAction(action) && !instance.getDiagnostics().hasErrorOccurred();
}

Result<std::shared_ptr<const std::string>> ClangCompiler::pch_for(
    const CompileUnit& unit, llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem> files) const {
  // The PCH must be built with exactly the options of the compiles that use
  // it (Clang refuses a mismatch), so there is one per distinct option set.
  namespace fs = std::filesystem;
  const std::string root = kRoot;
  std::vector<std::string> args = common_args(unit, "-xc++-header");
  // Process-wide: every compiler with these options and headers shares one
  // PCH. The lock is held while one builds, so each is built once.
  static std::mutex mutex;
  static std::map<std::pair<std::vector<std::string>, std::string>,
                  std::shared_ptr<const std::string>>
      cache;
  auto key = std::make_pair(args, pch_header());
  std::lock_guard lock(mutex);
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  // GeneratePCHAction writes only to a real file: a private temporary, read
  // back and removed.
  static std::atomic<unsigned> serial{0};
  const fs::path out = fs::temp_directory_path() / ("kiln-pch-" + std::to_string(::getpid()) + "-" +
                                                    std::to_string(serial++) + ".pch");
  std::vector<std::string> build_args = args;
  build_args.insert(build_args.end(), {root + "/include/" + kPchHeader, "-o", out.string()});
  std::string log;
  DiagnosticLog diagnostics(log);
  llvm::raw_string_ostream& log_stream = diagnostics.stream;
  auto inv = invocation(build_args, *diagnostics.engine, files);
  bool ok = inv.ok();
  if (ok) {
    // createInvocation() makes a -fsyntax-only invocation with no output:
    // the action and its output file are set here.
    (*inv)->getFrontendOpts().OutputFile = out.string();
    clang::GeneratePCHAction action;
    ok = run(std::move(*inv), files, action, log_stream, nullptr);
  }
  log_stream.flush();
  std::ifstream in(out, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::error_code ec;
  fs::remove(out, ec);
  if (!ok || bytes.empty()) {
    return compile_error(unit,
                         "Clang failed to precompile the common headers (KILN_PCH=0 skips it)", log,
                         build_args);
  }
  auto pch = std::make_shared<const std::string>(std::move(bytes));
  KILN_LOG(kDebug) << "clang-orc: precompiled " << settings_.pch_headers.size()
                   << " common headers into " << pch->size() << " bytes";
  cache.emplace(std::move(key), pch);
  return pch;
}

namespace {

struct UnitFiles {
  llvm::IntrusiveRefCntPtr<llvm::vfs::InMemoryFileSystem> memory;
  llvm::IntrusiveRefCntPtr<llvm::vfs::OverlayFileSystem> files;  // memory over the real disk
};

// The sources, from memory: the generated main file, the template's source
// as its own file, the prelude, the PCH's header and the unit's headers.
UnitFiles unit_files(const CompileUnit& unit, const std::string& pch_header) {
  const std::string root = kRoot;
  const std::string source_name = source_file_name(unit.kernel);
  auto memory = llvm::makeIntrusiveRefCnt<llvm::vfs::InMemoryFileSystem>();
  auto add = [&](const std::string& path, const std::string& text) {
    memory->addFile(path, 0, llvm::MemoryBuffer::getMemBufferCopy(text, path));
  };
  add(root + "/unit.cpp", unit_main_source(unit, source_name));
  add(root + "/" + source_name, unit.source);
  add(root + "/include/" + kPreludeHeader, prelude_source());
  add(root + "/include/" + kPchHeader, pch_header);
  for (const auto& h : unit.headers) add(root + "/include/" + h.name, h.content);
  auto files =
      llvm::makeIntrusiveRefCnt<llvm::vfs::OverlayFileSystem>(llvm::vfs::getRealFileSystem());
  files->pushOverlay(memory);
  return {memory, files};
}

double ms_between(std::chrono::steady_clock::time_point from,
                  std::chrono::steady_clock::time_point to) {
  return std::chrono::duration<double, std::milli>(to - from).count();
}

CompiledProgram object_program(const CompileUnit& unit, std::string binary, std::string log,
                               const std::vector<std::string>& args,
                               std::chrono::steady_clock::time_point start) {
  CompiledProgram program;
  program.format = unit.format;
  program.arch = unit.arch;
  program.binary = std::make_shared<const std::string>(std::move(binary));
  for (std::size_t i = 0; i < unit.specializations.size(); ++i) {
    program.lowered_names.push_back(entry_symbol(i));
  }
  program.log = user_paths(std::move(log));
  program.options = args;
  program.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return program;
}

}  // namespace

Result<CompiledProgram> ClangCompiler::compile(const CompileUnit& unit, const CancelToken& cancel) {
  const auto start = std::chrono::steady_clock::now();
  const std::vector<std::string> args = driver_args(unit);
  if (unit.format != BinaryFormat::kCpuObject && unit.format != BinaryFormat::kCpuSharedObject) {
    return make_error(ErrorCode::kInvalidArgument,
                      "the CPU compiler produces cpu_shared_object or cpu_object, not " +
                          std::string(binary_format_name(unit.format)) + ": compile " +
                          unit.describe() + " with NVRTC");
  }
  if (unit.specializations.empty()) {
    return make_error(
        ErrorCode::kInvalidArgument,
        "CompileUnit " + unit.kernel + " has no specializations: build it with kiln::group()");
  }
  if (cancel.cancelled()) {
    return make_error(ErrorCode::kCancelled, "compile of " + unit.describe() + " cancelled");
  }
  if (auto dir = checked_resource_dir(settings_.resource_dir); !dir) return dir.error();
  // (1)-(3) hold llvm_in_use(), and all they made with LLVM is gone when it
  // is released: the link below waits for every holder (llvm_lock.hpp).
  std::string log;
  auto compiled = [&]() -> Result<std::string> {
    auto in_use = llvm_in_use();
    ensure_native_target();

    // (1) The sources, from memory, and the PCH when the unit uses one.
    const std::string root = kRoot;
    auto [memory, files] = unit_files(unit, pch_header());
    std::shared_ptr<const std::string> pch;  // kept alive: the file system refers to its bytes
    if (uses_pch(unit)) {
      auto built = pch_for(unit, files);
      if (!built) return built.error();
      pch = std::move(*built);
      memory->addFile(root + "/" + kPchFile, 0,
                      llvm::MemoryBuffer::getMemBuffer(*pch, root + "/" + kPchFile,
                                                       /*RequiresNullTerminator=*/false));
    }

    // (2) The driver turns the arguments into a cc1 invocation (host CPU
    // features for -march=native, system include paths).
    DiagnosticLog diagnostics(log);
    llvm::raw_string_ostream& log_stream = diagnostics.stream;
    auto inv = invocation(args, *diagnostics.engine, files);
    if (!inv) {
      log_stream.flush();
      return compile_error(unit, "the Clang driver rejected the options of " + unit.describe(), log,
                           args);
    }
    const auto front_start = std::chrono::steady_clock::now();
    const std::string search = header_search_dirs(**inv);

    // (3) Front end, -O3 pipeline and code generation to an object in memory.
    llvm::SmallString<0> object;
    llvm::LLVMContext context;
    clang::EmitObjAction action(&context);
    const bool ok = run(std::move(*inv), files, action, log_stream,
                        std::make_unique<llvm::raw_svector_ostream>(object));
    log_stream.flush();
    KILN_LOG(kDebug) << "clang-orc " << unit.describe() << ": setup "
                     << ms_between(start, front_start) << " ms, front end + -O3 + codegen "
                     << ms_between(front_start, std::chrono::steady_clock::now()) << " ms";
    if (!ok || object.empty()) {
      return compile_error(unit, "Clang failed to compile " + unit.describe(), log, args, search);
    }
    return std::string(object.data(), object.size());
  }();
  if (!compiled) return compiled.error();
  std::string binary = std::move(*compiled);
  if (unit.format == BinaryFormat::kCpuSharedObject) {
    // The form a later process loads with no LLVM (runtime/shared_object.cpp).
    auto linked = link_shared_object(binary, unit.describe());
    if (!linked) return linked.error();
    binary = std::move(*linked);
  }
  return object_program(unit, std::move(binary), std::move(log), args, start);
}

}  // namespace kiln::cpu

namespace kiln::cpu {

std::unique_ptr<Compiler> make_compiler() {
  return std::make_unique<ClangCompiler>(ClangSettings::from_options());
}

}  // namespace kiln::cpu
