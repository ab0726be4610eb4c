#include "option_checks.hpp"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "kiln/core/options.hpp"
#include "kiln/search/search.hpp"
#include "kiln/search/search_plan.hpp"

namespace kiln::tool {

namespace {

std::string range_text(const std::string& lo, const std::string& hi, const std::string& meaning) {
  return "must be between " + lo + " and " + hi + (meaning.empty() ? "" : " (" + meaning + ")");
}

std::string number_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.15g", v);
  return buf;
}

}  // namespace

CLI::Validator integer_in(std::int64_t lo, std::uint64_t hi, const std::string& meaning) {
  const std::string range = range_text(std::to_string(lo), std::to_string(hi), meaning);
  return CLI::Validator(
      [lo, hi, range](std::string& text) -> std::string {
        const bool negative = !text.empty() && text[0] == '-';
        const char* first = text.data() + (negative ? 1 : 0);
        const char* last = text.data() + text.size();
        std::uint64_t magnitude = 0;
        auto [ptr, ec] = std::from_chars(first, last, magnitude);
        if (first == last || ptr != last ||
            (ec != std::errc() && ec != std::errc::result_out_of_range))
          return text + " is not a whole decimal number: it " + range;
        bool in_range = ec == std::errc();
        if (in_range && negative) {
          // -magnitude >= lo, computed without negating INT64_MIN.
          in_range =
              magnitude == 0 || (lo < 0 && magnitude <= static_cast<std::uint64_t>(-(lo + 1)) + 1);
        } else if (in_range) {
          in_range = magnitude <= hi && (lo <= 0 || magnitude >= static_cast<std::uint64_t>(lo));
        }
        if (!in_range) return text + " is out of range: it " + range;
        // CLI11 would read "010" as octal: hand it the plain decimal.
        text = (negative && magnitude ? "-" : "") + std::to_string(magnitude);
        return "";
      },
      "INT in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
}

CLI::Validator number_in(double lo, double hi, const std::string& meaning) {
  const std::string range = range_text(number_text(lo), number_text(hi), meaning);
  return CLI::Validator(
      [lo, hi, range](std::string& text) -> std::string {
        double v = 0;
        const char* last = text.data() + text.size();
        auto [ptr, ec] = std::from_chars(text.data(), last, v);
        if (text.empty() || ec != std::errc() || ptr != last || !std::isfinite(v))
          return text + " is not a finite decimal number: it " + range;
        if (v < lo || v > hi) return text + " is out of range: it " + range;
        return "";
      },
      "NUMBER in [" + number_text(lo) + ", " + number_text(hi) + "]");
}

CLI::Validator size_text() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        if (parse_size(text)) return "";
        return "'" + text + "' is not a size: use 512M, 4G or a byte count (at most 18 digits)";
      },
      "SIZE");
}

CLI::Validator output_file() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        namespace fs = std::filesystem;
        if (text.empty()) return "the output file name is empty: give a path to write";
        std::error_code ec;
        if (fs::is_directory(text, ec))
          return "'" + text + "' is a directory: give a file path inside it";
        const fs::path parent = fs::path(text).parent_path();
        if (!parent.empty() && !fs::is_directory(parent, ec))
          return "'" + text + "': its directory " + parent.string() +
                 " does not exist: create it or write elsewhere";
        return "";
      },
      "FILE");
}

CLI::Validator cuda_arch() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        if (text == "native") return "";  // as KILN_ARCH: the GPU's own
        for (const char* prefix : {"sm_", "compute_"}) {
          const std::string p = prefix;
          if (text.rfind(p, 0) != 0) continue;
          std::size_t i = p.size(), digits = 0;
          while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])))
            ++i, ++digits;
          if (digits > 0 &&
              (i == text.size() ||
               (i + 1 == text.size() && std::isalpha(static_cast<unsigned char>(text[i])))))
            return "";
        }
        return "'" + text +
               "' is not a CUDA arch: write sm_NN or compute_NN (e.g. sm_80, sm_90a) or native";
      },
      "ARCH");
}

CLI::Validator search_name(bool with_list) {
  return CLI::Validator(
      [with_list](std::string& name) -> std::string {
        if ((with_list && (name == "list" || name == "help")) || name == kAutoSearch ||
            find_search_strategy(name))
          return "";
        return "unknown search strategy '" + name + "': use auto (the default) or one of " +
               search_strategy_names() + (with_list ? " (`--search list` describes them)" : "");
      },
      "NAME");
}

void pacing_needs_steering(const CLI::App& cmd, const std::vector<std::string>& searches) {
  if (searches.empty()) return;
  for (const std::string& name : searches)
    // An unknown name is refused by its own check, naming the valid ones.
    if (name == kAutoSearch || !find_search_strategy(name) || search_is_steered(name)) return;
  std::string named;
  for (const std::string& name : searches) named += (named.empty() ? "" : ", ") + name;
  for (const char* option : {"--in-flight", "--rounds"})
    if (cmd.get_option(option)->count() > 0)
      throw CLI::ValidationError(
          option, std::string(option) +
                      " paces a steered search, one that proposes configs from the results "
                      "so far; " +
                      named + (searches.size() > 1 ? " propose" : " proposes") +
                      " every config at once, as the workers take them: drop " + option +
                      ", or name a steered strategy (`kiln tune --search list`)");
}

}  // namespace kiln::tool
