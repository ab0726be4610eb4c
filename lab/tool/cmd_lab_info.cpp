// kiln-lab info [--json]: which recorded-space files this build reads (a
// .zip needs libzip), once part of `kiln info`.
#include <iostream>
#include <nlohmann/json.hpp>

#include "kiln/lab/recorded_space.hpp"
#include "lab_commands.hpp"

namespace kiln::tool {

void add_lab_info_command(CLI::App& app, int& exit_code) {
  auto json = std::make_shared<bool>(false);
  CLI::App* cmd = app.add_subcommand("info", "What recorded-space files this build reads");
  cmd->add_flag("--json", *json, "Print one JSON document");
  cmd->callback([json, &exit_code] {
    if (*json) {
      std::cout << nlohmann::json{{"recorded_zip", recorded_zip_supported()}}.dump(2) << "\n";
    } else {
      std::cout << "Recorded     .json, .json.gz"
                << (recorded_zip_supported()
                        ? ", .zip of one file (libzip)"
                        : "; .zip not built: install libzip-dev (scripts/setup.sh) and rebuild")
                << "  (kiln-lab tune --recorded, kiln-lab bench search)\n";
    }
    exit_code = 0;
  });
}

}  // namespace kiln::tool
