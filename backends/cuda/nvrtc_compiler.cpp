#include "nvrtc_compiler.hpp"

#include <atomic>
#include <chrono>
#include <filesystem>
#include <mutex>
#include <shared_mutex>
#include <sstream>

#include "kiln/core/log.hpp"
#include "nvrtc_api.hpp"
#include "nvrtc_pch.hpp"
#include "probe.hpp"

namespace kiln::cuda {

namespace {

// An nvrtcProgram destroyed on scope exit.
class Program {
 public:
  Program(const NvrtcApi& api, nvrtcProgram program) : api_(api), program_(program) {}
  ~Program() { api_.DestroyProgram(&program_); }
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;
  nvrtcProgram get() const { return program_; }

 private:
  const NvrtcApi& api_;
  nvrtcProgram program_;
};

// NVRTC's flow callback must keep answering 1 once it has: the latch holds it
// even if a deadline is later moved.
struct FlowPayload {
  const CancelToken* token;
  std::atomic<bool> stop{false};
};

int flow_callback(void* payload, void* /*reserved*/) {
  auto* p = static_cast<FlowPayload*>(payload);
  if (p->stop.load(std::memory_order_relaxed)) return 1;
  if (p->token->cancelled()) {
    p->stop.store(true, std::memory_order_relaxed);
    return 1;
  }
  return 0;
}

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : " ") + s;
  return out;
}

// The first line of the log that says "error", for a readable message; the
// whole log travels in the details.
std::string first_error_line(const std::string& log) {
  std::istringstream in(log);
  for (std::string line; std::getline(in, line);) {
    if (line.find("error") != std::string::npos) return line;
  }
  return log.empty() ? "(empty log)" : log.substr(0, log.find('\n'));
}

std::string program_name(const std::string& kernel) {
  std::string name = kernel.empty() ? "kiln" : kernel;
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') c = '_';
  }
  return name + ".cu";
}

std::string read_log(const NvrtcApi& api, nvrtcProgram program) {
  std::size_t size = 0;
  if (api.GetProgramLogSize(program, &size) != NVRTC_SUCCESS || size <= 1) return {};
  std::string log(size, '\0');
  if (api.GetProgramLog(program, log.data()) != NVRTC_SUCCESS) return {};
  log.resize(size - 1);  // drop the terminating NUL
  return log;
}

bool starts_with(const std::string& s, std::string_view prefix) {
  return s.rfind(prefix, 0) == 0;
}

// The options of one program: the arch, the code options and the unit's
// (checked), then what changes no code: include paths, PCH, split compile.
Result<std::vector<std::string>> program_options(const CompileUnit& unit,
                                                 const NvrtcSettings& settings,
                                                 const std::vector<std::string>& code_options,
                                                 PchDirectories& pch, bool use_pch) {
  auto arch = nvrtc_arch_option(unit.arch, unit.format);
  if (!arch.ok()) return arch.error();

  std::vector<std::string> options{*arch};
  for (const auto& o : code_options) options.push_back(o);
  for (const auto& o : unit.options) options.push_back(o);
  if (Status allowed = check_options(options); !allowed.ok()) return allowed.error();
  for (const auto& dir : unit.include_dirs) options.push_back("-I" + dir);
  for (const auto& dir : settings.system_include_dirs) options.push_back("-I" + dir);
  if (use_pch) {
    // Keyed by every option before it: the option set a PCH is valid for.
    std::string dir = pch.dir_option(options);
    if (!dir.empty()) {
      options.push_back("-pch");
      // Puts "creating/using precompiled header" in the log: evidence of
      // what PCH did for each program.
      options.push_back("-pch-messages=true");
      options.push_back(std::move(dir));
    }
  }
  if (settings.split_compile > 0) {
    options.push_back("--split-compile=" + std::to_string(settings.split_compile));
  }
  return options;
}

Result<nvrtcProgram> create_program(const NvrtcApi& api, const CompileUnit& unit) {
  std::vector<const char*> header_names, header_contents;
  for (const auto& h : unit.headers) {
    header_names.push_back(h.name.c_str());
    header_contents.push_back(h.content.c_str());
  }
  nvrtcProgram raw = nullptr;
  const std::string name = program_name(unit.kernel);
  nvrtcResult rc = api.CreateProgram(&raw, unit.source.c_str(), name.c_str(),
                                     static_cast<int>(header_names.size()), header_contents.data(),
                                     header_names.data());
  if (rc != NVRTC_SUCCESS) {
    return make_error(ErrorCode::kInternal,
                      std::string("nvrtcCreateProgram failed: ") + api.GetErrorString(rc));
  }
  return raw;
}

Status add_name_expressions(const NvrtcApi& api, nvrtcProgram raw, const CompileUnit& unit) {
  for (const auto& s : unit.specializations) {
    nvrtcResult rc = api.AddNameExpression(raw, s.entry.c_str());
    if (rc != NVRTC_SUCCESS) {
      return make_error(ErrorCode::kInvalidArgument, "NVRTC rejected entry expression '" + s.entry +
                                                         "': " + api.GetErrorString(rc));
    }
  }
  return ok_status();
}

struct CompileRun {
  nvrtcResult rc;
  double seconds;
};

// NOTES: the compile holds the PCH heap lock shared; growing the heap takes
// it exclusively, so that happens only once the lock is released.
CompileRun run_compile(const NvrtcApi& api, nvrtcProgram raw,
                       const std::vector<std::string>& options, bool use_pch) {
  std::vector<const char*> argv;
  for (const auto& o : options) argv.push_back(o.c_str());
  const auto start = std::chrono::steady_clock::now();
  std::size_t pch_required = 0;
  nvrtcResult rc;
  {
    std::shared_lock heap(nvrtc_pch_heap_lock());
    rc = api.CompileProgram(raw, static_cast<int>(argv.size()), argv.data());
    if (use_pch && api.GetPCHCreateStatus(raw) == NVRTC_ERROR_PCH_CREATE_HEAP_EXHAUSTED) {
      api.GetPCHHeapSizeRequired(raw, &pch_required);
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (pch_required > 0) nvrtc_grow_pch_heap(pch_required);
  return {rc, seconds};
}

ErrorInfo compile_failure(const NvrtcApi& api, nvrtcResult rc, const CompileUnit& unit,
                          const NvrtcSettings& settings, const std::string& log,
                          const std::vector<std::string>& options) {
  // Where a header it did not find was looked for: the -I directories,
  // then the working directory, where NVRTC resolves a quoted name too
  // (a remembered failure is forgotten once the header is there).
  std::string search;
  for (const auto& dir : unit.include_dirs) search += dir + "\n";
  for (const auto& dir : settings.system_include_dirs) search += dir + "\n";
  std::error_code ec;
  search += std::filesystem::current_path(ec).string() + "\n";
  return make_error(ErrorCode::kCompileFailed,
                    "NVRTC failed to compile " + unit.describe() + ": " + first_error_line(log),
                    {{"log", log},
                     {"options", join(options)},
                     {"nvrtc_result", api.GetErrorString(rc)},
                     {"include_search", search}});
}

// The CUBIN or PTX into out.binary.
Status read_binary(const NvrtcApi& api, nvrtcProgram raw, CompiledProgram& out) {
  std::size_t size = 0;
  std::string bytes;
  nvrtcResult rc;
  if (out.format == BinaryFormat::kCubin) {
    rc = api.GetCUBINSize(raw, &size);
    if (rc == NVRTC_SUCCESS) {
      bytes.resize(size);
      rc = api.GetCUBIN(raw, bytes.data());
    }
  } else {
    rc = api.GetPTXSize(raw, &size);
    if (rc == NVRTC_SUCCESS) {
      bytes.resize(size);
      rc = api.GetPTX(raw, bytes.data());
      while (!bytes.empty() && bytes.back() == '\0') bytes.pop_back();  // the C string's NUL
    }
  }
  if (rc != NVRTC_SUCCESS || bytes.empty()) {
    return make_error(ErrorCode::kInternal,
                      std::string("NVRTC compiled but returned no ") +
                          binary_format_name(out.format) + ": " + api.GetErrorString(rc),
                      {{"log", out.log}, {"options", join(out.options)}});
  }
  out.binary = std::make_shared<const std::string>(std::move(bytes));
  return ok_status();
}

// One lowered (mangled) name per specialization, in order, into out.
Status read_lowered_names(const NvrtcApi& api, nvrtcProgram raw, const CompileUnit& unit,
                          CompiledProgram& out) {
  for (const auto& s : unit.specializations) {
    const char* lowered = nullptr;
    nvrtcResult rc = api.GetLoweredName(raw, s.entry.c_str(), &lowered);
    if (rc != NVRTC_SUCCESS || lowered == nullptr) {
      return make_error(ErrorCode::kCompileFailed,
                        "NVRTC has no lowered name for entry '" + s.entry +
                            "': is it a __global__ function template instantiation?",
                        {{"log", out.log}, {"options", join(out.options)}});
    }
    out.lowered_names.emplace_back(lowered);
  }
  return ok_status();
}

}  // namespace

NvrtcSettings NvrtcSettings::from_options(const Options& options) {
  NvrtcSettings s;
  s.pch = options.pch;
  std::istringstream flags(options.nvrtc_flags);
  for (std::string flag; flags >> flag;) s.extra_options.push_back(flag);
  s.system_include_dirs = {(options.cuda_home / "include").string(),
                           (options.cuda_home / "include" / "cccl").string()};
  return s;
}

Result<std::string> nvrtc_arch_option(const std::string& arch, BinaryFormat format) {
  if (format == BinaryFormat::kCpuObject || format == BinaryFormat::kCpuSharedObject) {
    return make_error(ErrorCode::kInvalidArgument,
                      "NVRTC cannot produce a CPU object: compile this unit with the CPU backend");
  }
  const bool real = starts_with(arch, "sm_");
  const bool virt = starts_with(arch, "compute_");
  if (!real && !virt) {
    return make_error(
        ErrorCode::kInvalidArgument,
        "'" + arch + "' is not a CUDA arch: use sm_80, sm_90a, ... (or compute_XX for PTX)");
  }
  if (format == BinaryFormat::kCubin) {
    if (!real) {
      return make_error(ErrorCode::kInvalidArgument, "CUBIN needs a real arch, got '" + arch +
                                                         "': use sm_" + arch.substr(8) +
                                                         " or ask for PTX");
    }
    return "-arch=" + arch;
  }
  return "-arch=" + (real ? "compute_" + arch.substr(3) : arch);
}

Status check_options(const std::vector<std::string>& options) {
  for (const auto& o : options) {
    if (starts_with(o, "-Ofast-compile") || starts_with(o, "--Ofast-compile")) {
      return make_error(ErrorCode::kInvalidArgument,
                        "option '" + o + "' is refused: after one such compile, later plain " +
                            "compiles in the same process produce different code (measured with " +
                            "NVRTC 13.0); drop it",
                        {{"options", join(options)}});
    }
    for (std::string_view flag : {"-fdevice-time-trace=", "--fdevice-time-trace="}) {
      if (!starts_with(o, flag)) continue;
      std::filesystem::path file(o.substr(flag.size()));
      std::error_code ec;
      for (const auto& candidate : {file, std::filesystem::path(file.string() + ".json")}) {
        if (std::filesystem::exists(candidate, ec)) {
          return make_error(ErrorCode::kInvalidArgument,
                            "option '" + o + "' would fail the compile: " + candidate.string() +
                                " exists and NVRTC refuses to overwrite it; remove it first",
                            {{"options", join(options)}});
        }
      }
    }
  }
  return ok_status();
}

std::unique_ptr<Compiler> make_compiler(NvrtcSettings settings) {
  return std::make_unique<NvrtcCompiler>(std::move(settings));
}

Result<std::string> default_arch() {
  // KILN_ARCH=native means the device's, like no KILN_ARCH at all.
  const std::string& chosen = Options::global().arch;
  if (!chosen.empty() && chosen != "native") return chosen;
  // The driver alone, probed once: the whole toolchain report would also
  // open the CPU backend (an LLVM JIT and a thread pool) for nothing.
  static const CudaDriverStatus driver = probe_driver();
  if (!driver.devices.empty()) return driver.devices.front().arch;
  return make_error(ErrorCode::kUnavailable,
                    "no CUDA device to take the arch from (" + driver.devices_reason +
                        "): give one, e.g. --arch sm_90a or KILN_ARCH=sm_90a");
}

NvrtcCompiler::NvrtcCompiler(NvrtcSettings settings)
    : settings_(std::move(settings)), pch_(std::make_unique<PchDirectories>()) {}

NvrtcCompiler::~NvrtcCompiler() = default;

std::string NvrtcCompiler::version() const {
  const auto& api = nvrtc();
  return api.ok() ? (*api)->version_string() : "absent";
}

std::vector<std::string> NvrtcCompiler::code_options() const {
  return settings_.extra_options;
}

Result<CompiledProgram> NvrtcCompiler::compile(const CompileUnit& unit, const CancelToken& cancel) {
  const auto& loaded = nvrtc();
  if (!loaded.ok()) return loaded.error();
  const NvrtcApi& api = **loaded;
  if (unit.specializations.empty()) {
    return make_error(
        ErrorCode::kInvalidArgument,
        "compile unit '" + unit.kernel + "' has no specializations: nothing to compile");
  }
  if (cancel.cancelled()) {
    return make_error(ErrorCode::kCancelled, "compile of " + unit.describe() + " was cancelled");
  }
  const bool use_pch = settings_.pch && api.GetPCHCreateStatus != nullptr;
  auto built = program_options(unit, settings_, code_options(), *pch_, use_pch);
  if (!built) return built.error();
  const std::vector<std::string>& options = *built;

  auto raw = create_program(api, unit);
  if (!raw) return raw.error();
  Program program(api, *raw);
  if (auto s = add_name_expressions(api, *raw, unit); !s) return s.error();
  FlowPayload payload{&cancel};
  if (api.SetFlowCallback) api.SetFlowCallback(*raw, &flow_callback, &payload);

  const CompileRun run = run_compile(api, *raw, options, use_pch);
  std::string log = read_log(api, *raw);
  if (run.rc == NVRTC_ERROR_CANCELLED || (run.rc != NVRTC_SUCCESS && payload.stop.load())) {
    return make_error(ErrorCode::kCancelled,
                      "compile of " + unit.describe() + " was cancelled while running",
                      {{"log", log}, {"options", join(options)}});
  }
  if (run.rc != NVRTC_SUCCESS) return compile_failure(api, run.rc, unit, settings_, log, options);

  CompiledProgram out;
  out.format = unit.format;
  out.arch = unit.arch;
  out.log = std::move(log);
  out.options = options;
  out.seconds = run.seconds;
  if (auto s = read_binary(api, *raw, out); !s) return s.error();
  if (auto s = read_lowered_names(api, *raw, unit, out); !s) return s.error();
  return out;
}

}  // namespace kiln::cuda
