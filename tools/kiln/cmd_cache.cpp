// kiln cache path|ls|stats|verify|prune|clear|export|import [--json]: look
// after the artifact cache and the tuning cache of Options::global()
// (KILN_CACHE_DIR and friends). Exit codes: 0 done, 1 a failure or (verify)
// broken entries found, 2 usage. A failure includes what was not done
// (files a clear or prune could not remove, a cache directory the tuner
// refuses): never a success line over nothing done.
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "cache/file_io.hpp"
#include "cache_failures.hpp"
#include "cache_output.hpp"
#include "commands.hpp"
#include "duration_text.hpp"
#include "kiln/cache/artifact_cache.hpp"
#include "kiln/cache/failed_configs.hpp"
#include "kiln/cache/tuning_cache.hpp"
#include "kiln/core/options.hpp"
#include "kiln/tuner/kernel_tuner_export.hpp"
#include "option_checks.hpp"

namespace kiln::tool {

namespace {

// A string field of an entry's metadata for the listing; "?" when absent or
// of another type (value() would throw for that, out of `kiln cache ls`).
std::string meta_text(const nlohmann::json& meta, const char* key) {
  const auto it = meta.find(key);
  return it != meta.end() && it->is_string() ? it->get<std::string>() : "?";
}

std::string human_size(std::uint64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 4) v /= 1024, ++u;
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", v, units[u]);
  return buf;
}

std::string local_time(std::int64_t ns) {
  std::time_t t = static_cast<std::time_t>(ns / 1'000'000'000);
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm);
  return buf;
}

nlohmann::json state_json(CacheState state, const std::string& reason) {
  return {{"state", cache_state_name(state)}, {"reason", reason}};
}

// Shared by every subcommand: the --json switch, the exit code.
using Context = CacheOutput;

// The caches whose directory failed the safety checks the tuner applies
// (dir_safety: group- or other-writable, a foreign owner): the tuner uses
// neither, so a listing or a verification that shows them empty or healthy
// would lie. One line per distinct reason.
std::vector<std::string> refusals(const ArtifactCache& artifacts, const TuningCache& tuning) {
  std::vector<std::string> out;
  const bool a = artifacts.state() == CacheState::kRefused;
  const bool t = tuning.state() == CacheState::kRefused;
  if (a && t && artifacts.state_reason() == tuning.state_reason()) {
    out.push_back("cache refused (the tuner will not use it): " + artifacts.state_reason());
    return out;
  }
  if (a)
    out.push_back("artifact cache refused (the tuner will not use it): " +
                  artifacts.state_reason());
  if (t)
    out.push_back("tuning cache refused (the tuner will not use it): " + tuning.state_reason());
  return out;
}

// What a sweep could not do, as lines for emit_with_problems.
void sweep_problems(const SweepReport& report, std::vector<std::string>& problems) {
  if (!report.skipped.empty()) problems.push_back("nothing removed: " + report.skipped);
  if (report.failed_removals > 0) {
    problems.push_back("could not remove " + std::to_string(report.failed_removals) +
                       " artifact files (first: " + report.first_failure + ")");
  }
}

// ls and verify only read: opening the caches would create a missing
// directory (a mistyped KILN_CACHE_DIR, made real by looking at it). When
// there is none, says so and returns true; nothing there is nothing broken.
bool no_cache_at(const Context& c, nlohmann::json j) {
  const Options& o = Options::global();
  std::error_code ec;
  if (std::filesystem::exists(o.cache_dir, ec) || ec) return false;
  j["cache_dir"] = o.cache_dir.string();
  j["exists"] = false;
  c.emit(j, "no cache at " + o.cache_dir.string() + " (from " + o.cache_dir_source +
                "): nothing compiled or tuned there yet\n");
  return true;
}

void run_path(const Context& c) {
  const Options& o = Options::global();
  ArtifactCache artifacts(o);
  TuningCache tuning(o);
  nlohmann::json j = {{"cache_dir", o.cache_dir.string()},
                      {"source", o.cache_dir_source},
                      {"artifacts", artifacts.dir().string()},
                      {"tuning", tuning.dir().string()},
                      {"tuning_write_file", tuning.write_path().string()}};
  c.emit(j, o.cache_dir.string() + "\n");
}

void run_ls(const Context& c) {
  if (no_cache_at(
          c, {{"artifacts", nlohmann::json::array()}, {"tuning_records", nlohmann::json::array()}}))
    return;
  const Options& o = Options::global();
  ArtifactCache artifacts(o);
  TuningCache tuning(o);
  nlohmann::json entries = nlohmann::json::array();
  std::string text = "Artifacts (" + artifacts.dir().string() + ")\n";
  std::map<Hash128, std::uint64_t> program_sizes;
  std::vector<ArtifactFileInfo> files = artifacts.scan(/*check=*/true);
  for (const auto& f : files) {
    if (f.is_program) program_sizes[f.key] = f.size;
  }
  for (const auto& f : files) {
    // Programs are listed through the entries that name them: one key,
    // one line, as before programs were stored once.
    if (f.temporary || f.is_program) continue;
    nlohmann::json e = {{"key", f.key.hex()},
                        {"size", f.size},
                        {"last_use", local_time(f.last_use)},
                        {"path", f.path.string()},
                        {"meta", f.meta}};
    if (!f.problem.empty()) e["problem"] = f.problem;
    auto program = program_sizes.find(f.program);
    if (f.problem.empty()) {
      e["program"] = f.program.hex();
      if (program != program_sizes.end()) e["program_size"] = program->second;
    }
    entries.push_back(e);
    std::string what = !f.problem.empty() ? "BROKEN: " + f.problem
                       : program == program_sizes.end()
                           ? "MISSING PROGRAM " + f.program.hex()
                           : meta_text(f.meta, "format") + " " + meta_text(f.meta, "arch") +
                                 "  program " + f.program.hex().substr(0, 8) + " (" +
                                 human_size(program->second) + ")";
    text += "  " + f.key.hex() + "  " + human_size(f.size) + "  " + local_time(f.last_use) + "  " +
            what + "\n";
  }
  nlohmann::json records = nlohmann::json::array();
  text += "Tuning records (" + tuning.dir().string() + ")\n";
  for (const auto& r : tuning.records()) {
    records.push_back(r.to_json());
    char time[32];
    std::snprintf(time, sizeof time, "%.4g ms", r.best_time_ms);
    text += "  " + r.problem.canonical() + "  on " + r.device.name + " (" + r.device.arch + ")  " +
            r.best.to_string() + "  " + time + "\n";
  }
  for (const auto& f : tuning.files()) {
    if (!f.problem.empty()) text += "  BROKEN: " + f.problem + "\n";
  }
  const FailedConfigs failures = FailedConfigs::beside(tuning);
  text += "Remembered failures (" + failures.dir().string() +
          "; `kiln cache forget --failures` forgets them)\n";
  nlohmann::json failed = failures_listing(failures, std::time(nullptr), &text);
  std::string why;
  if (artifacts.state() == CacheState::kDisabled && !tuning.writable(&why)) {
    text += "(" + why + ": nothing is read)\n";
  }
  c.emit_with_problems(
      {{"artifacts", entries}, {"tuning_records", records}, {"failures", std::move(failed)}}, text,
      refusals(artifacts, tuning));
}

void run_stats(const Context& c) {
  const Options& o = Options::global();
  ArtifactCache artifacts(o);
  TuningCache tuning(o);
  std::uint64_t entries = 0, programs = 0, bytes = 0, temps = 0;
  for (const auto& f : artifacts.scan(false)) {
    (f.temporary ? temps : f.is_program ? programs : entries) += 1;
    bytes += f.size;
  }
  std::size_t records = tuning.records().size();
  nlohmann::json files = nlohmann::json::array();
  for (const auto& f : tuning.files()) files.push_back(f.to_json());
  const std::vector<FailureFile> failure_files = FailedConfigs::beside(tuning).list();
  const std::size_t failed_configs = failed_config_count(failure_files);
  nlohmann::json j = {{"cache_dir", o.cache_dir.string()},
                      {"artifacts",
                       {{"dir", artifacts.dir().string()},
                        {"entries", entries},
                        {"programs", programs},
                        {"bytes", bytes},
                        {"max_bytes", artifacts.max_bytes()},
                        {"temporary_files", temps},
                        {"status", state_json(artifacts.state(), artifacts.state_reason())}}},
                      {"tuning",
                       {{"dir", tuning.dir().string()},
                        {"records", records},
                        {"files", files},
                        {"failed_configs", failed_configs},
                        {"failure_files", failure_files.size()},
                        {"status", state_json(tuning.state(), tuning.state_reason())}}}};
  std::string text =
      "Cache dir   " + o.cache_dir.string() + "  (from " + o.cache_dir_source + ")\n";
  text += "Artifacts   " + std::to_string(entries) + " entries (" + std::to_string(programs) +
          " programs), " + human_size(bytes) + " of " + human_size(artifacts.max_bytes()) + ", " +
          std::to_string(temps) + " temporary files; " + cache_state_name(artifacts.state()) + "\n";
  text += "Tuning      " + std::to_string(records) + " records in " +
          std::to_string(tuning.files().size()) + " files; " + cache_state_name(tuning.state()) +
          "\n";
  text += "Failures    " + std::to_string(failed_configs) + " configs remembered as failed, in " +
          std::to_string(failure_files.size()) + " files\n";
  if (!artifacts.state_reason().empty()) text += "  " + artifacts.state_reason() + "\n";
  c.emit_with_problems(j, text, refusals(artifacts, tuning));
}

void run_verify(const Context& c, bool remove) {
  if (no_cache_at(c, {{"entries", 0}, {"tuning_records", 0}, {"broken_total", 0}})) return;
  const Options& o = Options::global();
  ArtifactCache artifacts(o);
  TuningCache tuning(o);
  if (artifacts.state() == CacheState::kDisabled) {
    return c.fail("nothing verified: caching is disabled (" + artifacts.state_reason() + ")");
  }
  SweepReport report = artifacts.verify(remove);
  std::string text;
  std::size_t broken = report.broken.size();
  for (const auto& f : report.broken) text += "broken: " + f.problem + "\n";
  nlohmann::json files = nlohmann::json::array();
  for (const auto& f : tuning.files()) {
    files.push_back(f.to_json());
    if (!f.problem.empty()) ++broken, text += "broken: " + f.problem + "\n";
    for (const auto& s : f.skipped) ++broken, text += "broken: " + s + "\n";
  }
  // What --remove did, counted, not assumed: it removes artifact files; a
  // broken tuning record stays until a save rewrites its file.
  std::string removed;
  if (remove) {
    removed = " (" + std::to_string(report.removed_entries + report.removed_programs) +
              " artifact files removed";
    if (broken > report.broken.size())
      removed +=
          "; broken tuning records are dropped by the next save into their file: any "
          "`kiln tune` that saves, or `kiln cache clear`";
    removed += ")";
  }
  text += std::to_string(report.entries) + " healthy artifact entries (" +
          std::to_string(report.programs) + " programs), " +
          std::to_string(tuning.records().size()) + " tuning records, " + std::to_string(broken) +
          " broken" + removed + "\n";
  nlohmann::json j = report.to_json();
  j["tuning_files"] = files;
  j["tuning_records"] = tuning.records().size();
  j["broken_total"] = broken;
  std::vector<std::string> problems = refusals(artifacts, tuning);
  if (remove) sweep_problems(report, problems);
  j["refused"] =
      artifacts.state() == CacheState::kRefused || tuning.state() == CacheState::kRefused;
  c.emit_with_problems(j, text, problems);
  if (broken != 0) *c.exit_code = 1;
}

void run_prune(const Context& c, const std::string& max_size) {
  auto bound = parse_size(max_size);
  if (!bound)
    return c.fail("--max-size '" + max_size + "' is not a size: use 512M, 4G or a byte count");
  ArtifactCache artifacts(Options::global());
  if (artifacts.state() != CacheState::kReady) {
    return c.fail(std::string("cannot prune a ") + cache_state_name(artifacts.state()) +
                  " cache: " + artifacts.state_reason());
  }
  SweepReport report = artifacts.prune(*bound);
  std::vector<std::string> problems;
  sweep_problems(report, problems);
  c.emit_with_problems(
      report.to_json(),
      "removed " + std::to_string(report.removed_entries) + " entries and " +
          std::to_string(report.removed_programs) + " programs (" +
          human_size(report.removed_bytes) + "); " + std::to_string(report.entries) + " entries (" +
          std::to_string(report.programs) + " programs), " + human_size(report.bytes) + " left\n",
      problems);
}

void run_clear(const Context& c) {
  const Options& o = Options::global();
  ArtifactCache artifacts(o);
  TuningCache tuning(o);
  if (artifacts.state() != CacheState::kReady) {
    return c.fail(std::string("cannot clear a ") + cache_state_name(artifacts.state()) +
                  " cache: " + artifacts.state_reason());
  }
  SweepReport report = artifacts.clear();
  std::vector<std::string> problems;
  sweep_problems(report, problems);
  Result<std::size_t> files = tuning.clear();
  std::size_t removed_files = 0;
  if (files) {
    removed_files = *files;
  } else {
    problems.push_back(files.error().message);
    auto removed = files.error().details.find("removed");
    if (removed != files.error().details.end()) removed_files = std::stoul(removed->second);
  }
  nlohmann::json j = {{"removed_entries", report.removed_entries},
                      {"removed_programs", report.removed_programs},
                      {"removed_bytes", report.removed_bytes},
                      {"removed_tuning_files", removed_files},
                      {"failed_removals", report.failed_removals}};
  c.emit_with_problems(j,
                       "removed " + std::to_string(report.removed_entries) + " artifact entries (" +
                           human_size(report.removed_bytes) + ") and " +
                           std::to_string(removed_files) + " tuning files\n",
                       problems);
}

// `--format kernel-tuner`: the newest record's measurements (of `kernel`
// when given) as a Kernel Tuner cache file, for Kernel Tuner's tools and
// for `kiln bench search --recorded`.
void run_export_kernel_tuner(const Context& c, const std::string& file, const std::string& kernel) {
  TuningCache tuning(Options::global());
  const TuningRecord* newest = nullptr;
  const std::vector<TuningRecord> records = tuning.records();
  for (const auto& r : records) {
    if (!kernel.empty() && r.kernel() != kernel) continue;
    if (!newest || r.created > newest->created) newest = &r;
  }
  if (!newest && !records.empty()) {
    // Records carry the template's name (gemm_f32_cpu), not the family a
    // tune was asked for (gemm_f32): name the ones there are.
    std::set<std::string> names;
    for (const auto& r : records) names.insert(r.kernel());
    std::string list;
    for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
    return c.fail("no tuning record of kernel " + kernel + " in the cache; it holds records of " +
                  list + ": give one of those to --kernel");
  }
  if (!newest)
    return c.fail("no tuning record" + (kernel.empty() ? "" : " of kernel " + kernel) +
                  " in the cache to export; tune it first (kiln tune)");
  Result<nlohmann::json> out = kernel_tuner_cache(*newest);
  if (!out) return c.fail(out.error().message);
  // FILE.gz is gzip'd, as its name says (and as the shared spaces are):
  // plain JSON under a .gz name was read back by Kiln, which sniffs, but
  // refused by gunzip and by Kernel Tuner.
  std::string text = out->dump(1) + "\n";
  if (std::filesystem::path(file).extension() == ".gz") {
    Result<std::string> gz = gzip_text(text);
    if (!gz) return c.fail(gz.error().message);
    text = std::move(*gz);
  }
  // Atomic, as every cache write: a reader never sees half a file, and a
  // symlink at FILE is replaced, not written through.
  if (Status written = cache::atomic_write(file, text, cache::PathOwner::kUser); !written.ok())
    return c.fail(written.error().describe());
  c.emit(
      {{"exported_configs", (*out)["cache"].size()}, {"kernel", newest->kernel()}, {"file", file}},
      "exported " + std::to_string((*out)["cache"].size()) + " measured configs of " +
          newest->kernel() + " (" + newest->problem.canonical() + ") to " + file +
          " in Kernel Tuner's cache layout\n");
}

void run_export(const Context& c, const std::string& file, const std::string& format,
                const std::string& kernel) {
  if (format == "kernel-tuner") return run_export_kernel_tuner(c, file, kernel);
  // The kiln table holds every record; a --kernel it would ignore is refused.
  if (!kernel.empty())
    throw CLI::ValidationError("--kernel",
                               "selects the record of --format kernel-tuner; the kiln "
                               "format exports every record: drop --kernel or add "
                               "--format kernel-tuner");
  // The kiln table is plain JSON, which `kiln cache import` reads: under a
  // .gz name gunzip refused it, and import refused it gzip'd.
  if (std::filesystem::path(file).extension() == ".gz")
    throw CLI::ValidationError("FILE", "'" + file +
                                           "' names a gzip file, but the kiln format is plain "
                                           "JSON (what kiln cache import reads): name it .json");
  TuningCache tuning(Options::global());
  Result<std::size_t> n = tuning.export_table(file);
  if (!n) return c.fail(n.error().describe());
  // A tuning file it could not read is records missing from the table:
  // named, and exit 1, as import does for the records it skips.
  std::vector<std::string> problems;
  for (const auto& f : tuning.files()) {
    if (!f.problem.empty())
      problems.push_back("not exported: " + f.problem + "; repair or remove " + f.path.string() +
                         " (kiln cache verify lists what is broken) and export again");
    for (const auto& s : f.skipped) problems.push_back("not exported: " + s);
  }
  c.emit_with_problems({{"exported_records", *n}, {"file", file}},
                       "exported " + std::to_string(*n) + " tuning records to " + file + "\n",
                       problems);
}

void run_import(const Context& c, const std::string& file) {
  TuningCache tuning(Options::global());
  Result<std::size_t> n = tuning.import_table(file);
  if (!n) return c.fail(n.error().describe());
  // Each record skipped is named with why (a checksum that does not match,
  // a missing field), and exits 1: a table that lost records on the way
  // is not a clean import.
  std::vector<std::string> skipped;
  for (const auto& f : tuning.files()) {
    if (f.path == file) skipped = f.skipped;
  }
  c.emit_with_problems(
      {{"imported_records", *n},
       {"skipped_records", skipped.size()},
       {"into", tuning.write_path().string()}},
      "imported " + std::to_string(*n) + " tuning records into " + tuning.write_path().string() +
          (skipped.empty()
               ? std::string()
               : " (" + std::to_string(skipped.size()) + " malformed records skipped)") +
          "\n",
      skipped);
}

}  // namespace

void add_cache_command(CLI::App& app, int& exit_code) {
  auto* cache = app.add_subcommand("cache", "Inspect and maintain the artifact and tuning caches");
  cache->require_subcommand(1);
  auto ctx = std::make_shared<Context>();
  ctx->exit_code = &exit_code;
  auto sub = [&](const char* name, const char* help) {
    auto* s = cache->add_subcommand(name, help);
    s->add_flag("--json", ctx->json, "Print one JSON object");
    return s;
  };
  sub("path", "Print the cache directory")->callback([ctx] { run_path(*ctx); });
  sub("ls", "List artifact entries and tuning records")->callback([ctx] { run_ls(*ctx); });
  sub("stats", "Sizes, counts and the state of both caches")->callback([ctx] { run_stats(*ctx); });
  auto remove = std::make_shared<bool>(false);
  auto* verify = sub("verify", "Check every entry and tuning file; exit 1 when any is broken");
  verify->add_flag("--remove", *remove, "Remove the broken artifact entries");
  verify->callback([ctx, remove] { run_verify(*ctx, *remove); });
  auto max_size = std::make_shared<std::string>();
  auto* prune = sub("prune", "Evict least recently used artifacts down to a size");
  prune->add_option("--max-size", *max_size, "Size to keep: 512M, 4G or bytes")
      ->required()
      ->check(size_text());
  prune->callback([ctx, max_size] { run_prune(*ctx, *max_size); });
  sub("clear", "Remove every artifact entry and tuning file")->callback([ctx] { run_clear(*ctx); });
  auto file = std::make_shared<std::string>();
  auto format = std::make_shared<std::string>("kiln");
  auto kernel = std::make_shared<std::string>();
  auto* exp = sub("export", "Write every tuning record into FILE (a table to ship)");
  exp->add_option("FILE", *file, "Output JSON file")->required()->check(output_file());
  exp->add_option("--format", *format,
                  "kiln (every record, a table to ship) or kernel-tuner (the newest record's "
                  "measurements as a Kernel Tuner cache file)")
      ->check(CLI::IsMember({"kiln", "kernel-tuner"}));
  exp->add_option("--kernel", *kernel,
                  "With --format kernel-tuner: the newest record of this kernel")
      ->check(CLI::Validator(
          [](std::string& name) -> std::string {
            // An empty name was taken as no --kernel: the newest record of
            // any kernel was exported.
            return name.empty() ? "the kernel name is empty: give one, or leave --kernel out "
                                  "for the newest record of any kernel"
                                : "";
          },
          "NAME"));
  exp->callback([ctx, file, format, kernel] { run_export(*ctx, *file, *format, *kernel); });
  add_cache_forget_command(
      *sub("forget", "Forget remembered failures (--failures), keeping good records"), ctx);
  auto* imp = sub("import", "Merge the tuning records of FILE into the cache");
  imp->add_option("FILE", *file, "Tuning JSON file (from kiln cache export)")->required();
  imp->callback([ctx, file] { run_import(*ctx, *file); });
  add_cache_remote_command(*cache, exit_code);
}

}  // namespace kiln::tool
