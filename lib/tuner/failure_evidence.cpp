#include "kiln/tuner/failure_evidence.hpp"

#include <algorithm>
#include <chrono>
#include <regex>
#include <set>
#include <sstream>

#include "kiln/core/hash.hpp"
#include "kiln/core/input_file.hpp"

namespace kiln::internal {

namespace {

// A header or source worth a witness is far below this; a larger file
// counts as unreadable (an empty digest), which is still a fact to compare.
constexpr std::uint64_t kMaxWitnessBytes = 64ull << 20;
// The part of a log that is parsed: compiler logs of one unit are far
// shorter, and a runaway one must not cost a regex over megabytes.
constexpr std::size_t kMaxLogBytes = 1u << 20;

void add_unique(std::vector<std::string>& list, const std::string& item) {
  if (std::find(list.begin(), list.end(), item) == list.end()) list.push_back(item);
}

// The places `name` resolves to from `dirs`: itself when absolute.
std::vector<std::filesystem::path> places(const std::string& name,
                                          const std::vector<std::string>& dirs) {
  const std::filesystem::path p(name);
  if (p.is_absolute()) return {p.lexically_normal()};
  std::vector<std::filesystem::path> out;
  for (const auto& d : dirs) out.push_back((std::filesystem::path(d) / p).lexically_normal());
  return out;
}

bool is_regular(const std::filesystem::path& p) {
  std::error_code ec;
  return std::filesystem::is_regular_file(p, ec);
}

}  // namespace

bool momentary_outcome(const std::string& outcome) {
  return outcome == "timeout" || outcome == "crashed" || outcome == "load_failed" ||
         outcome == "launch_failed";
}

std::int64_t unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string file_digest(const std::filesystem::path& path) {
  if (!is_regular(path)) return "";
  auto bytes = read_input_file(path, "file", kMaxWitnessBytes);
  return bytes ? hash128(*bytes).hex() : "";
}

std::vector<std::string> missing_headers(const std::string& log) {
  // The three spellings Kiln's compilers (and a host compiler behind a
  // user's options) use.
  static const std::regex missing(
      R"re('([^'\n]+)' file not found|cannot open source file "([^"\n]+)"|fatal error: ([^:\s]+): No such file or directory)re");
  const std::string text = log.substr(0, kMaxLogBytes);
  std::vector<std::string> out;
  for (std::sregex_iterator it(text.begin(), text.end(), missing), end; it != end; ++it) {
    for (int g = 1; g <= 3; ++g) {
      if ((*it)[g].matched) add_unique(out, (*it)[g].str());
    }
  }
  return out;
}

void add_compile_evidence(FailedConfig& failure, const std::string& log,
                          const std::vector<std::string>& include_dirs,
                          const std::filesystem::path& cwd) {
  const std::string text = log.substr(0, kMaxLogBytes);
  for (const auto& d : include_dirs) add_unique(failure.search_dirs, d);
  if (!cwd.empty()) add_unique(failure.search_dirs, cwd.string());
  auto witness = [&](FileWitness w) {
    if (std::find(failure.files.begin(), failure.files.end(), w) == failure.files.end())
      failure.files.push_back(std::move(w));
  };
  for (const std::string& name : missing_headers(text)) {
    add_unique(failure.missing_headers, name);
    // NOTES: a place that holds the header now is not one the compiler
    // searched (it would have found it there): only the absent places
    // witness. Else a header created where the compiler never looks
    // (beside a template compiled from memory) would make the failure be
    // forgotten, fail again and be forgotten again on every run.
    for (const auto& p : places(name, failure.search_dirs)) {
      if (!is_regular(p)) witness({p.string(), ""});
    }
  }
  // Files a diagnostic names at a line ("x.h:3:5: error", "x.h(3): error",
  // "In file included from x.h:1:"): the ones that exist were read, and
  // their content decided the failure as much as the source did.
  static const std::regex located(R"re(([^\s:()'"]+)(?::\d+(?::\d+)?:|\(\d+\)))re");
  std::set<std::string> seen;
  for (std::sregex_iterator it(text.begin(), text.end(), located), end; it != end; ++it) {
    const std::string name = (*it)[1].str();
    if (!seen.insert(name).second) continue;
    for (const auto& p : places(name, failure.search_dirs)) {
      if (!is_regular(p)) continue;
      witness({p.string(), file_digest(p)});
      break;  // the first place that holds it is the one the compiler read
    }
  }
}

std::optional<std::string> failure_gone(const FailedConfig& failure, std::int64_t now) {
  for (const auto& w : failure.files) {
    const std::string now_digest = file_digest(w.path);
    if (now_digest == w.digest) continue;
    if (w.digest.empty()) return "the file " + w.path + ", missing when it failed, exists now";
    if (now_digest.empty()) return "the file " + w.path + " its errors named is gone";
    return "the file " + w.path + " its errors named has changed";
  }
  if (momentary_outcome(failure.outcome)) {
    if (failure.skipped_runs >= kRetryAfterRuns) {
      return "a " + failure.outcome + " can pass with the moment: retried after " +
             std::to_string(failure.skipped_runs) + " runs skipped it";
    }
    if (now - failure.failed_at >= kRetryAfterSeconds) {
      return "a " + failure.outcome + " can pass with the moment: retried " +
             std::to_string((now - failure.failed_at) / 86400) + " days after it failed";
    }
  }
  return std::nullopt;
}

}  // namespace kiln::internal
