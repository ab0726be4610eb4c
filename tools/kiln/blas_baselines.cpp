#include "blas_baselines.hpp"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <sstream>

#include "blas_library.hpp"

namespace kiln::tool {

namespace {

namespace fs = std::filesystem;

std::vector<std::string> python_interpreters() {
  std::vector<std::string> out;
  auto add = [&](const fs::path& path) {
    std::error_code ec;
    if (!fs::is_regular_file(path, ec) || ::access(path.c_str(), X_OK) != 0) return false;
    for (const auto& seen : out)
      if (seen == path.string()) return true;
    out.push_back(path.string());
    return true;
  };
  if (const char* path = std::getenv("PATH")) {
    std::stringstream dirs(path);
    for (std::string dir; std::getline(dirs, dir, ':');)
      if (!dir.empty() && add(fs::path(dir) / "python3")) break;
  }
  if (const char* venv = std::getenv("VIRTUAL_ENV"); venv && *venv)
    add(fs::path(venv) / "bin" / "python");
  std::error_code ec;
  add(fs::current_path(ec) / ".venv" / "bin" / "python");
  // build/bin/kiln in a source tree: the tree's .venv (scripts/setup.sh's).
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) add(exe.parent_path().parent_path().parent_path() / ".venv" / "bin" / "python");
  return out;
}

// Prints "label<TAB>path" for each OpenBLAS a site-packages directory holds
// beside numpy or scipy, without importing either.
constexpr const char* kFindBundledBlas = R"(
import glob, os, site, sys
dirs = list(site.getsitepackages()) + [site.getusersitepackages()] + sys.path
places = [("numpy.libs", "numpy's OpenBLAS"), ("numpy/.libs", "numpy's OpenBLAS"),
          ("scipy.libs", "scipy's OpenBLAS"), ("scipy_openblas*/lib", "scipy-openblas")]
for d in dirs:
    for place, label in places:
        for f in sorted(glob.glob(os.path.join(d, place, "lib*openblas*.so*"))):
            print(label + "\t" + os.path.realpath(f))
)";

void add_bundled_blas(const std::string& python, std::vector<BlasCandidate>& out) {
  // Through sh so that a Python that is not there (a pyenv shim without a
  // version) says nothing on kiln's stderr.
  auto run =
      run_child({"/bin/sh", "-c", "exec \"$0\" -c \"$1\" 2>/dev/null", python, kFindBundledBlas});
  if (!run.ok() || run->status != 0) return;
  std::stringstream lines(run->out);
  for (std::string line; std::getline(lines, line);) {
    const std::size_t tab = line.find('\t');
    if (tab == std::string::npos) continue;
    const std::string path = line.substr(tab + 1);
    bool seen = false;
    for (const auto& c : out) seen = seen || (c.names.size() == 1 && c.names[0] == path);
    if (!seen) out.push_back({line.substr(0, tab), {path}, python});
  }
}

std::string variable_setting(const nlohmann::json& hello) {
  return hello["variable"].get<std::string>() + "=" +
         (hello["value"].is_string() ? hello["value"].get<std::string>() : "");
}

void add_note(BlasBaseline& run, const std::string& note) {
  run.note += (run.note.empty() ? "" : "; ") + note;
}

std::string kernel_with_isa(const std::string& kernel) {
  static const char* const isa[] = {"",    "SSE2 or less", "SSE3", "SSSE3",  "SSE4",
                                    "AVX", "AVX with FMA", "AVX2", "AVX-512"};
  const int level = blas_kernel_isa_level(kernel);
  return level ? kernel + " (" + isa[level] + ")" : kernel;
}

// The environment's own run of `native`'s library, when the environment sets
// the variable that forces its kernel. `native` is an element of out.runs:
// the new run is pushed last, after every use of it.
void add_environment_run(BlasBaseline& native, const std::string& library, int threads,
                         BlasBaselines& out) {
  const nlohmann::json& hello = native.worker.hello();
  const std::string variable = hello["variable"].get<std::string>();
  const char* value = std::getenv(variable.c_str());
  if (!value || !*value) return;
  const std::string forced = variable + "=" + value;
  auto worker = BlasWorker::start(library, BlasRun::kEnvironment, threads);
  if (!worker.ok()) {
    out.unavailable.push_back({{"label", native.name() + " with " + forced},
                               {"library", library},
                               {"why", worker.error().message}});
    add_note(native, "run natively: with " + forced + " from the environment it failed");
    return;
  }
  const std::string& native_kernel = native.kernel();
  const std::string kernel = worker->hello()["kernel"].get<std::string>();
  if (kernel == native_kernel) {
    add_note(native, forced + " from the environment gives this same kernel");
    return;
  }
  BlasBaseline run{0, native.candidate, BlasRun::kEnvironment, std::move(*worker), true, ""};
  run.id = static_cast<int>(out.runs.size()) + 1;
  const int level = blas_kernel_isa_level(kernel),
            native_level = blas_kernel_isa_level(native_kernel);
  const std::string native_ref = "[" + std::to_string(native.id) + "]";
  if (level > 0 && native_level > 0 && level < native_level) {
    run.eligible = false;
    run.note = forced + " from the environment forces " + kernel_with_isa(kernel) +
               ", a lesser ISA than this library's native " + kernel_with_isa(native_kernel) +
               ": reported, not the baseline; " + native_ref + " is the same library run natively";
    add_note(native, "its native kernel: run again without " + forced +
                         " from the environment, which forces a lesser one ([" +
                         std::to_string(run.id) + "])");
  } else {
    run.note =
        forced + " from the environment; " + native_ref + " is the same library run natively";
  }
  out.runs.push_back(std::move(run));
}

}  // namespace

std::vector<BlasCandidate> find_blas_candidates() {
  std::vector<BlasCandidate> out = {
      {"system OpenBLAS", {"libopenblas.so.0", "libopenblas.so"}, ""}};
  for (const std::string& python : python_interpreters()) add_bundled_blas(python, out);
  out.push_back({"system BLIS", {"libblis.so.4", "libblis.so"}, ""});
  out.push_back({"MKL", {"libmkl_rt.so.2", "libmkl_rt.so"}, ""});
  return out;
}

std::string BlasBaseline::name() const {
  const nlohmann::json& hello = worker.hello();
  return (candidate.label.empty() ? hello["flavor"].get<std::string>() : candidate.label) + " " +
         hello["version"].get<std::string>();
}

const std::string& BlasBaseline::kernel() const {
  return worker.hello()["kernel"].get_ref<const std::string&>();
}

nlohmann::json BlasBaseline::to_json() const {
  nlohmann::json out = worker.hello();
  out["id"] = id;
  out["name"] = name();
  out["found_by"] = candidate.found_by;
  out["run"] = run == BlasRun::kNative ? "native" : "environment";
  out["isa_level"] = blas_kernel_isa_level(kernel());
  out["eligible"] = eligible;
  out["note"] = note;
  return out;
}

BlasBaselines start_blas_baselines(const std::vector<BlasCandidate>& candidates, int threads) {
  BlasBaselines out;
  for (const BlasCandidate& candidate : candidates) {
    std::string why, opened;
    std::optional<BlasWorker> worker;
    for (const std::string& name : candidate.names) {
      auto started = BlasWorker::start(name, BlasRun::kNative, threads);
      if (started.ok()) {
        worker.emplace(std::move(*started));
        opened = name;
        break;
      }
      why += (why.empty() ? "" : "; ") + started.error().message;
    }
    if (!worker) {
      out.unavailable.push_back(
          {{"label", candidate.label.empty() ? candidate.names[0] : candidate.label},
           {"library", candidate.names[0]},
           {"why", why}});
      continue;
    }
    const nlohmann::json& file = worker->hello()["library"];
    bool seen = false;
    for (const auto& run : out.runs) seen = seen || run.worker.hello()["library"] == file;
    if (seen) continue;
    const std::size_t at = out.runs.size();
    out.runs.push_back(
        {static_cast<int>(at) + 1, candidate, BlasRun::kNative, std::move(*worker), true, ""});
    add_environment_run(out.runs[at], opened, threads, out);
    BlasBaseline& native = out.runs[at];
    if (native.worker.hello()["set_by"] == "kiln")
      add_note(native,
               variable_setting(native.worker.hello()) + " set by kiln from the CPU's vector unit");
  }
  return out;
}

}  // namespace kiln::tool
