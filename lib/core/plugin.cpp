// See kiln/core/plugin.hpp. KILN_PLUGIN_BUILD_DIR, KILN_PLUGIN_INSTALL_DIR and
// KILN_PLUGIN_LIBDIR (the install's library folder, relative) are compiled in (lib/CMakeLists.txt);
// the Python package sets neither (its plugin lies beside its libkiln.so).
#include "kiln/core/plugin.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <filesystem>
#include <mutex>

#ifndef KILN_PLUGIN_BUILD_DIR
#define KILN_PLUGIN_BUILD_DIR ""
#endif
#ifndef KILN_PLUGIN_INSTALL_DIR
#define KILN_PLUGIN_INSTALL_DIR ""
#endif
#ifndef KILN_PLUGIN_LIBDIR
#define KILN_PLUGIN_LIBDIR ""
#endif

namespace kiln {

namespace {

struct Spec {
  const char* file;
  const char* env;
  const char* what;  // for messages
  const char* fix;
  const char* entry;
  // RTLD_GLOBAL: Open MPI's own components resolve libmpi's symbols in the
  // global scope, which RTLD_LOCAL would hide from them.
  bool global;
};

constexpr Spec kSpecs[] = {
    {"libkiln_cpu_backend.so", "KILN_CPU_BACKEND_PLUGIN", "the CPU backend plugin",
     "reinstall Kiln (pip install . for the Python package; build the kiln_cpu_plugin target "
     "or cmake --install for the kiln command)",
     "kiln_cpu_backend_plugin", false},
    {"libkiln_mpi.so", "KILN_MPI_PLUGIN", "the MPI plugin",
     "build the kiln_mpi_plugin target (or cmake --install) beside this kiln",
     "kiln_mpi_collective_plugin", true},
    {"libkiln_redis.so", "KILN_REDIS_PLUGIN", "the remote cache's Redis plugin",
     "build the kiln_redis_plugin target (or cmake --install) beside this kiln",
     "kiln_redis_plugin", false},
};
constexpr int kPlugins = sizeof kSpecs / sizeof kSpecs[0];

std::string running_executable() {
  char buf[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string();
}

std::string in_dir(const std::filesystem::path& dir, const char* file) {
  return (dir / file).string();
}

const char* env_path(const Spec& spec) {
  const char* env = std::getenv(spec.env);
  return env && *env ? env : nullptr;
}

Result<void*> open_first(const Spec& spec, const std::vector<std::string>& places) {
  const bool named = env_path(spec) != nullptr;
  std::string tried;
  for (const std::string& path : places) {
    tried += (tried.empty() ? "" : ", ") + path;
    std::error_code ec;
    if (!named && !std::filesystem::exists(path, ec)) continue;
    const int mode = RTLD_NOW | RTLD_NODELETE | (spec.global ? RTLD_GLOBAL : RTLD_LOCAL);
    void* handle = ::dlopen(path.c_str(), mode);
    if (!handle) {
      const char* why = ::dlerror();
      return make_error(ErrorCode::kUnavailable, std::string("cannot load ") + spec.what + " " +
                                                     path + " (" + (why ? why : "unknown error") +
                                                     "): " + spec.fix);
    }
    if (void* symbol = ::dlsym(handle, spec.entry)) return symbol;
    return make_error(ErrorCode::kUnavailable, std::string(spec.what) + " " + path + " has no " +
                                                   spec.entry +
                                                   " entry (not a Kiln plugin): " + spec.fix);
  }
  return make_error(ErrorCode::kUnavailable, std::string("cannot find ") + spec.what + " " +
                                                 spec.file + " (tried " + tried + "): " + spec.fix +
                                                 ", or set " + spec.env + " to its path");
}

}  // namespace

std::vector<std::string> plugin_places(Plugin which, const void* anchor) {
  const Spec& spec = kSpecs[static_cast<int>(which)];
  if (const char* env = env_path(spec)) return {env};
  std::vector<std::string> places;
  Dl_info info{};
  if (anchor && ::dladdr(anchor, &info) && info.dli_fname && *info.dli_fname)
    places.push_back(in_dir(std::filesystem::path(info.dli_fname).parent_path(), spec.file));
  for (const char* dir : {KILN_PLUGIN_BUILD_DIR, KILN_PLUGIN_INSTALL_DIR}) {
    if (*dir) places.push_back(in_dir(dir, spec.file));
  }
  if (const std::string exe = running_executable(); !exe.empty()) {
    const std::filesystem::path bin = std::filesystem::path(exe).parent_path();
    places.push_back(in_dir(bin, spec.file));
    // An installed tree moved elsewhere: <prefix>/bin/kiln, <prefix>/lib/kiln/.
    if (*KILN_PLUGIN_LIBDIR)
      places.push_back(in_dir(bin.parent_path() / KILN_PLUGIN_LIBDIR / "kiln", spec.file));
  }
  return places;
}

Result<void*> load_plugin(Plugin which, const void* anchor) {
  static std::once_flag once[kPlugins];
  static Result<void*>* loaded[kPlugins] = {};
  const int i = static_cast<int>(which);
  std::call_once(once[i], [&] {
    // Never freed: the answer is the process's, as the plugin is.
    loaded[i] = new Result<void*>(open_first(kSpecs[i], plugin_places(which, anchor)));
  });
  return *loaded[i];
}

}  // namespace kiln
