#include "kiln/core/options.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <nlohmann/json.hpp>

extern char** environ;

namespace kiln {

Environment Environment::process() {
  Environment env;
  for (char** p = environ; p && *p; ++p) {
    std::string entry(*p);
    auto eq = entry.find('=');
    if (eq == std::string::npos) continue;
    env.vars_.emplace(entry.substr(0, eq), entry.substr(eq + 1));
  }
  return env;
}

std::optional<std::string> Environment::get(const std::string& name) const {
  auto it = vars_.find(name);
  if (it == vars_.end()) return std::nullopt;
  return it->second;
}

Environment& Environment::set(std::string name, std::string value) {
  vars_.insert_or_assign(std::move(name), std::move(value));
  return *this;
}

Environment& Environment::unset(const std::string& name) {
  vars_.erase(name);
  return *this;
}

std::optional<std::uint64_t> parse_size(const std::string& text) {
  if (text.empty()) return std::nullopt;
  std::size_t digits = 0;
  while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) ++digits;
  if (digits == 0 || digits > 18) return std::nullopt;
  std::uint64_t value = std::stoull(text.substr(0, digits));
  std::string suffix = text.substr(digits);
  if (!suffix.empty() && (suffix.back() == 'B' || suffix.back() == 'b')) suffix.pop_back();
  if (suffix.size() == 2 && (suffix[1] == 'i' || suffix[1] == 'I')) suffix.pop_back();
  int shift = 0;
  if (suffix.empty())
    shift = 0;
  else if (suffix == "K" || suffix == "k")
    shift = 10;
  else if (suffix == "M" || suffix == "m")
    shift = 20;
  else if (suffix == "G" || suffix == "g")
    shift = 30;
  else if (suffix == "T" || suffix == "t")
    shift = 40;
  else
    return std::nullopt;
  if (shift && value > (UINT64_MAX >> shift)) return std::nullopt;
  return value << shift;
}

namespace {

// Reads one variable with a parser; on a malformed value records a problem
// naming the variable and the accepted forms, and keeps the default.
template <class T, class Parse>
void read(const Environment& env, const char* name, T* field, Parse parse, const char* accepted,
          std::vector<std::string>* problems) {
  auto raw = env.get(name);
  if (!raw || raw->empty()) return;
  if (!parse(*raw, field) && problems) {
    problems->push_back(std::string(name) + "='" + *raw + "' is not valid: use " + accepted +
                        " (keeping the default)");
  }
}

[[nodiscard]] bool parse_bool(const std::string& s, bool* out) {
  if (s == "1" || s == "true" || s == "on" || s == "yes") return *out = true, true;
  if (s == "0" || s == "false" || s == "off" || s == "no") return *out = false, true;
  return false;
}

[[nodiscard]] bool parse_count(const std::string& s, int* out, int max) {
  if (s.empty() || s.size() > 6 || !std::all_of(s.begin(), s.end(), ::isdigit)) return false;
  int v = std::stoi(s);
  if (v > max) return false;
  *out = v;
  return true;
}

}  // namespace

namespace {
// A size variable's value ("512M", "4G", a byte count) into *out.
bool size_into(const std::string& s, std::uint64_t* out) {
  const auto v = parse_size(s);
  if (v) *out = *v;
  return v.has_value();
}
}  // namespace

namespace {
// KILN_SEARCH's name is checked where strategies are known (the tuner).
void read_tuning_overrides(const Environment& env, Options& o, std::vector<std::string>* problems) {
  if (auto s = env.get("KILN_SEARCH")) o.search = *s;
  read(
      env, "KILN_EFFORT", &o.effort,
      [](const std::string& s, std::string* out) {
        return (s == "quick" || s == "default" || s == "full") && (*out = s, true);
      },
      "quick, default or full", problems);
  read(
      env, "KILN_BUDGET_S", &o.budget_seconds,
      [](const std::string& s, std::optional<double>* out) {
        char* end = nullptr;
        const double v = std::strtod(s.c_str(), &end);
        if (end != s.c_str() + s.size() || !std::isfinite(v) || v < 0) return false;
        return *out = v, true;
      },
      "seconds, 0 or more (0: no budget)", problems);
  read(env, "KILN_PRINT_AUTOTUNING", &o.print_autotuning, parse_bool, "0 or 1", problems);
  if (auto f = env.get("KILN_AUTOTUNE_LOG"); f && !f->empty()) o.autotune_log = *f;
}
}  // namespace

Options Options::from_env(const Environment& env, std::vector<std::string>* problems) {
  Options o;
  if (auto dir = env.get("KILN_CACHE_DIR"); dir && !dir->empty()) {
    o.cache_dir = *dir;
    o.cache_dir_source = "KILN_CACHE_DIR";
  } else if (auto xdg = env.get("XDG_CACHE_HOME"); xdg && !xdg->empty()) {
    o.cache_dir = std::filesystem::path(*xdg) / "kiln";
    o.cache_dir_source = "XDG_CACHE_HOME";
  } else if (auto home = env.get("HOME"); home && !home->empty()) {
    o.cache_dir = std::filesystem::path(*home) / ".cache" / "kiln";
    o.cache_dir_source = "HOME";
  } else {
    // No HOME at all (some batch systems): a per-user directory under /tmp.
    o.cache_dir =
        std::filesystem::temp_directory_path() / ("kiln-cache-" + std::to_string(getuid()));
    o.cache_dir_source = "TMPDIR (HOME unset)";
  }
  read(env, "KILN_CACHE_MAX_SIZE", &o.cache_max_bytes, size_into,
       "a size such as 512M, 4G or a byte count", problems);
  read(env, "KILN_CACHE_MEMORY_SIZE", &o.cache_memory_bytes, size_into,
       "a size such as 64M, or 0 to turn the in-memory layer off", problems);
  read(env, "KILN_WORKER_MEMORY", &o.worker_memory_bytes, size_into,
       "a size such as 4G, or 0 for no limit", problems);
  // The first rank variable that is set decides; a job launcher sets one.
  for (const char* name : {"KILN_RANK", "RANK", "LOCAL_RANK"}) {
    if (auto r = env.get(name); r && !r->empty()) {
      read(
          env, name, &o.rank,
          [](const std::string& s, int* out) { return parse_count(s, out, 1 << 20); },
          "a non-negative rank number", problems);
      break;
    }
  }
  read(env, "KILN_CACHE_READ_ONLY", &o.cache_read_only, parse_bool, "0 or 1", problems);
  read(env, "KILN_CACHE_DISABLE", &o.cache_disabled, parse_bool, "0 or 1", problems);
  read(
      env, "KILN_LOG_LEVEL", &o.log_level,
      [](const std::string& s, LogLevel* out) { return parse_log_level(s, out); },
      "error, warn, info, debug, trace or off", problems);
  read(
      env, "KILN_COMPILE_THREADS", &o.compile_threads,
      [](const std::string& s, int* out) { return parse_count(s, out, 1024); },
      "a thread count from 0 (one per core) to 1024", problems);
  read(
      env, "KILN_GROUP_SIZE", &o.group_size,
      [](const std::string& s, int* out) { return parse_count(s, out, 256); },
      "a group size from 0 (Kiln's default) to 256", problems);
  read(
      env, "KILN_ARCH", &o.arch,
      [](const std::string& s, std::string* out) {
        if (s.rfind("sm_", 0) != 0 && s.rfind("compute_", 0) != 0 && s != "native" && s != "host") {
          return false;
        }
        *out = s;
        return true;
      },
      "an arch such as sm_80 or sm_90a, or 'host' for the CPU", problems);
  read(env, "KILN_PCH", &o.pch, parse_bool, "0 or 1", problems);
  read(env, "KILN_TUNING", &o.tuning, parse_bool, "0 or 1", problems);
  read(env, "KILN_RETUNE", &o.retune, parse_bool, "0 or 1", problems);
  read_tuning_overrides(env, o, problems);
  if (auto h = env.get("CUDA_HOME"); h && !h->empty())
    o.cuda_home = *h;
  else if (auto p = env.get("CUDA_PATH"); p && !p->empty())
    o.cuda_home = *p;
  if (auto f = env.get("KILN_NVRTC_FLAGS")) o.nvrtc_flags = *f;
  if (auto f = env.get("KILN_CPU_FLAGS")) o.cpu_flags = *f;
  if (auto w = env.get("KILN_WORKER"); w && !w->empty()) o.bench_worker = *w;
  return o;
}

namespace {
struct GlobalOptions {
  Options options;
  std::vector<std::string> problems;
};

const GlobalOptions& global_options() {
  static const GlobalOptions g = [] {
    GlobalOptions out;
    out.options = Options::from_env(Environment::process(), &out.problems);
    set_log_level(out.options.log_level);
    return out;
  }();
  return g;
}
}  // namespace

namespace {
// Set in worker processes: their parent reported the problems.
std::atomic<bool> g_parent_reported{false};
}  // namespace

const Options& Options::global() {
  const GlobalOptions& g = global_options();
  // Reported after initialisation, so logging (which reads the level from
  // here) cannot re-enter the static initialiser.
  static const bool reported = [&] {
    if (g_parent_reported.load()) return true;
    for (const auto& p : g.problems) KILN_LOG(kWarn) << p;
    return true;
  }();
  (void)reported;
  return g.options;
}

void Options::problems_reported_by_parent() {
  g_parent_reported.store(true);
}

const std::vector<std::string>& Options::global_problems() {
  return global_options().problems;
}

nlohmann::json Options::to_json() const {
  return {{"cache_dir", cache_dir.string()},
          {"cache_dir_source", cache_dir_source},
          {"cache_max_bytes", cache_max_bytes},
          {"cache_read_only", cache_read_only},
          {"cache_disabled", cache_disabled},
          {"cache_memory_bytes", cache_memory_bytes},
          {"rank", rank},
          {"log_level", log_level_name(log_level)},
          {"compile_threads", compile_threads},
          {"group_size", group_size},
          {"arch", arch},
          {"pch", pch},
          {"tuning", tuning},
          {"retune", retune},
          {"cuda_home", cuda_home.string()},
          {"nvrtc_flags", nvrtc_flags},
          {"cpu_flags", cpu_flags},
          {"bench_worker", bench_worker.string()},
          {"search", search},
          {"effort", effort},
          {"budget_s", budget_seconds ? nlohmann::json(*budget_seconds) : nlohmann::json()},
          {"print_autotuning", print_autotuning},
          {"autotune_log", autotune_log.string()}};
}

}  // namespace kiln
