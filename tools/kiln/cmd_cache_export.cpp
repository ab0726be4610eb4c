// kiln cache export: every tuning record into FILE (the kiln table), or the newest record's
// measurements as a Kernel Tuner cache file (--format kernel-tuner).
// (cache_common.hpp has what the subcommands share).
#include "cache_common.hpp"

#include <filesystem>
#include <set>

#include "kiln/cache/file_io.hpp"
#include "kiln/cache/tuning_cache.hpp"
#include "kiln/core/options.hpp"
#include "kiln/tuner/kernel_tuner_export.hpp"
#include "option_checks.hpp"

namespace kiln::tool {

namespace {

// `--format kernel-tuner`: the newest record's measurements (of `kernel`
// when given) as a Kernel Tuner cache file, for Kernel Tuner's tools and
// for `kiln-lab bench search --recorded`.
void run_export_kernel_tuner(const CacheOutput& c, const std::string& file,
                             const std::string& kernel) {
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

void run_export(const CacheOutput& c, const std::string& file, const std::string& format,
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

}  // namespace

void add_cache_export_command(CLI::App& cache, const CacheOut& out) {
  auto file = std::make_shared<std::string>();
  auto format = std::make_shared<std::string>("kiln");
  auto kernel = std::make_shared<std::string>();
  CLI::App* exp = add_cache_subcommand(cache, *out, "export",
                                       "Write every tuning record into FILE (a table to ship)");
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
  exp->callback([out, file, format, kernel] { run_export(*out, *file, *format, *kernel); });
}

}  // namespace kiln::tool
