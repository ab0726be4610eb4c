// The output files of `kiln-lab bench search`: see search_outputs.hpp.
#include "search_outputs.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <utility>

namespace kiln::tool {

// Opens `path` (when given) for an output the run writes; false, having
// said why, when it cannot be.
bool open_output(std::ofstream& out, const std::string& path, const char* what) {
  if (path.empty()) return true;
  out.open(path);
  if (out) return true;
  std::fprintf(stderr,
               "kiln-lab bench search: cannot write the %s to %s (%s); give --%s a path in a "
               "writable directory\n",
               what, path.c_str(), std::strerror(errno), what);
  return false;
}

// Two paths of one file, compared as weakly_canonical absolute paths, so
// ./t and t match even before t exists (weakly_canonical keeps a path none
// of whose leading parts exists as it is: t stayed t, ./t became /cwd/t).
bool names_one_file(const std::string& a, const std::string& b) {
  auto canonical = [](const std::string& path, std::error_code& ec) {
    const std::filesystem::path absolute = std::filesystem::absolute(path, ec);
    return ec ? absolute : std::filesystem::weakly_canonical(absolute, ec);
  };
  std::error_code ea, eb;
  const std::filesystem::path pa = canonical(a, ea);
  const std::filesystem::path pb = canonical(b, eb);
  return ea || eb ? std::filesystem::path(a).lexically_normal() ==
                        std::filesystem::path(b).lexically_normal()
                  : pa == pb;
}

// The same file named twice among --trace, --plot and the recorded spaces:
// the plot would overwrite the trace, and an output opened before the run
// would empty the space it is about to read. Says which; true when there is
// such a pair.
bool outputs_clash(const std::string& trace, const std::string& plot,
                   const std::vector<std::string>& files) {
  if (!trace.empty() && !plot.empty() && names_one_file(trace, plot)) {
    std::fprintf(
        stderr,
        "kiln-lab bench search: --trace %s and --plot %s are the same file: the plot would "
        "overwrite the trace; give them different paths\n",
        trace.c_str(), plot.c_str());
    return true;
  }
  for (const auto& [flag, out] : {std::pair{"--trace", &trace}, std::pair{"--plot", &plot}})
    for (const std::string& in : files)
      if (!out->empty() && names_one_file(*out, in)) {
        std::fprintf(stderr,
                     "kiln-lab bench search: %s %s is the recorded space %s: writing it would "
                     "destroy the file before it is read; give %s another path\n",
                     flag, out->c_str(), in.c_str(), flag);
        return true;
      }
  return false;
}

}  // namespace kiln::tool
