// How the `kiln cache` subcommands (and `kiln cache remote`) answer: text
// or one JSON object (--json), failures on stderr (or as an "error" object)
// with exit 1.
#pragma once

#include <iostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kiln::tool {

struct CacheOutput {
  bool json = false;
  int* exit_code = nullptr;
  std::string prefix = "kiln cache";  // names the command in messages on stderr

  void emit(const nlohmann::json& j, const std::string& text) const {
    if (json)
      std::cout << j.dump(2) << "\n";
    else
      std::cout << text;
  }
  // A failure: one line on stderr (or an "error" object with --json), exit 1.
  void fail(const std::string& message) const {
    if (json)
      std::cout << nlohmann::json{{"error", message}}.dump(2) << "\n";
    else
      std::cerr << prefix << ": " << message << "\n";
    *exit_code = 1;
  }
  // Output that holds problems: the report (with the problems in "errors"
  // under --json), each problem on stderr, exit 1 when there is any.
  void emit_with_problems(nlohmann::json j, const std::string& text,
                          const std::vector<std::string>& problems) const {
    if (!problems.empty()) j["errors"] = problems;
    emit(j, text);
    if (problems.empty()) return;
    if (!json) {
      for (const auto& p : problems) std::cerr << prefix << ": " << p << "\n";
    }
    *exit_code = 1;
  }
};

}  // namespace kiln::tool
